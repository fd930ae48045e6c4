"""Delayed cumulative acks, as a browser sends them (client-bridge `executor/acks.ts`).

An ack is held for at most `ACK_DELAY_MS` after the first one of a quiet spell; what the
client applied meanwhile leaves as ONE ack per session when that time is up (always one at
the end of a burst). A client applies each session's envelopes in seq order and duplicates
lie below the last applied, so the highest seq held has every one before it applied: the
merged ack is cumulative. The steward's retransmit timeout exceeds the delay (config checks
it), so a held ack never makes it resend.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from steward.protocol.limits import ACK_DELAY_MS, MAX_ACKED_IDS
from steward.protocol.messages import Ack


def merge(prev: Ack, ack: Ack) -> Ack:
    """One cumulative ack for both (the caller keeps `applied` under MAX_ACKED_IDS)."""
    return Ack(
        session_id=ack.session_id,
        seq=max(prev.seq, ack.seq),
        applied=prev.applied + ack.applied,
        applied_at=ack.applied_at,
        cumulative=True,
    )


class AckCoalescer:
    """Holds acks briefly and sends one per session when the delay is up, as a browser does."""

    def __init__(self, send: Callable[[Ack], None], delay_s: float = ACK_DELAY_MS / 1000) -> None:
        self._send = send
        self.delay_s = delay_s
        self._held: dict[str, Ack] = {}
        self._timer: asyncio.TimerHandle | None = None
        self._closed = False

    def add(self, ack: Ack) -> None:
        """Hold it (merged into the session's held ack); the first one held arms the timer."""
        if self._closed:
            return
        prev = self._held.get(ack.session_id)
        if prev is not None and len(prev.applied) + len(ack.applied) > MAX_ACKED_IDS:
            self._send(prev)
            prev = None
        self._held[ack.session_id] = ack if prev is None else merge(prev, ack)
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self.delay_s, self.flush)

    def flush(self) -> None:
        """Send what is held now: one ack per session."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        held, self._held = self._held, {}
        for ack in held.values():
            self._send(ack)

    def close(self) -> None:
        """The client is leaving: drop what is held and hold nothing more, so no ack is sent
        into a room already left (the steward resends what it never saw acked on rejoin)."""
        self._closed = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._held = {}
