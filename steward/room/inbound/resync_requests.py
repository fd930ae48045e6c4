"""A browser's `steward:resync`: what it missed of one session, or of the whole room.

Resyncs replay from Postgres, so they get a tighter budget than other messages, and a whole
room's history (`sessionId: "*"`) a tighter one still. In host mode only the host applies
envelopes, so only its requests count. A browser replayed to that has acked nothing since is
refused a second replay (`ResyncGate`), but still gets the statuses of sessions a dead
steward left: a few small packets, within the whole-room rate, that a browser asking right
after its join replay would otherwise never see.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from steward.protocol.messages import Resync
from steward.protocol.names import RESYNC_ALL_SESSIONS, TOPIC_RESYNC
from steward.room.inbound.intake import RateLimiter
from steward.room.inbound.packets import Reject
from steward.room.outbound.broadcaster import Broadcaster

RESYNC_PER_MIN = 30
RESYNC_ALL_PER_MIN = 4


class ResyncRequests:
    """Answers a browser's `steward:resync` under its own tighter budget."""

    def __init__(
        self,
        broadcaster: Broadcaster,
        *,
        may_apply: Callable[[str], bool],
        shared_document: Callable[[], bool],
        resend_interrupted: Callable[[str], Awaitable[None]],
        reject: Reject,
    ) -> None:
        self._broadcaster = broadcaster
        self._may_apply = may_apply
        self._shared_document = shared_document  # host mode: the app's sync holds the canvas
        self._resend_interrupted = resend_interrupted
        self._reject = reject
        self._limit = RateLimiter(RESYNC_PER_MIN)
        self._whole_room_limit = RateLimiter(RESYNC_ALL_PER_MIN)

    async def on_resync(self, sender: str, req: Resync) -> None:
        if not self._may_apply(sender):
            return
        whole = req.session_id == RESYNC_ALL_SESSIONS
        gate = self._broadcaster.gate
        if not whole and gate.shows_receipt(sender, req.session_id, req.last_seq):
            gate.acked(sender)  # past the start of its replay: it got it, its ack was lost
        if gate.owes_ack(sender):  # replayed to already, acked nothing since
            self._reject(TOPIC_RESYNC, sender, "unacked_resync")
            if whole and self._whole_room_limit.allow(sender):
                await self._resend_interrupted(sender)
            return
        if not self._limit.allow(sender):
            self._reject(TOPIC_RESYNC, sender, "rate_limited")
            return
        if whole:
            if not self._whole_room_limit.allow(sender):
                self._reject(TOPIC_RESYNC, sender, "rate_limited", "whole-room resync")
                return
            await self._broadcaster.resync_room(
                sender, skip_acked=req.last_seq > 0, shared_document=self._shared_document()
            )
            # A browser that had not seen us yet missed those statuses when they were sent.
            await self._resend_interrupted(sender)
        else:
            await self._broadcaster.resync(sender, req.session_id, req.last_seq)
