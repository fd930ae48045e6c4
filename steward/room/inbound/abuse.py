"""A participant that keeps sending what the steward refuses loses its right to publish data.

Each refusal is a strike; an unsolicited byte or text stream weighs by its size (one strike
per `STREAM_BYTES_PER_STRIKE`, at least `STREAM_STRIKE`: it costs the room's shared data
channel far more than a bad packet, so a 5 MiB one is over the default limit at its header);
data over the participant's inbound budget (`budget`) weighs likewise. More than
`limit` strikes in a minute and the steward revokes the participant's `can_publish_data`
through LiveKit's own `UpdateParticipant`, so the SFU drops its packets before they reach
anyone. Logged (`participant_muted`), counted, and listed in the operator's view. The mute
outlives the connection: the identity rejoining within `mute_s` (a fresh token, a reload) is
muted again."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Awaitable, Callable

from livekit import api

from steward.obs import metrics
from steward.obs.logging import get_logger
from steward.task_set import TaskSet

log = get_logger(__name__)

STREAM_STRIKE = 10
STREAM_BYTES_PER_STRIKE = 16 * 1024
# Refusals that are the steward's own doing or no one's in particular, never strikes
# (a late stream answers a request the steward gave up on; a browser may ask for the replay
# the steward already sent it on joining).
_NOT_STRIKES = frozenset({"no_sender", "late_stream", "unacked_resync"})

Revoke = Callable[[str], Awaitable[None]]


# A stream that sends more than its header announced: no honest SDK does, so one mutes.
OVERRAN_STRIKE = 1_000_000


def stream_weight(size: int | None) -> int:
    """The strikes an unsolicited stream of `size` bytes (None: not announced) weighs."""
    return max(STREAM_STRIKE, (size or 0) // STREAM_BYTES_PER_STRIKE)


def refusal_weight(reason: str, size: int | None) -> int:
    """The strikes one refusal weighs: most one, a stream by its size, a lie all of them."""
    if reason == "unexpected_stream":
        return stream_weight(size)
    if reason == "stream_overran":
        return OVERRAN_STRIKE
    return 1


class AbuseGuard:
    """Counts each participant's refused sends; past the limit, revokes its right to publish."""

    def __init__(
        self,
        room_id: str,
        revoke: Revoke,
        *,
        limit_per_min: int,
        mute_s: float = 600.0,
        clock: Callable[[], float] = time.monotonic,
        on_muted: Callable[[str, float], None] = lambda _identity, _for_s: None,
    ) -> None:
        self.room_id = room_id
        self._revoke = revoke
        # The room lets go of what it holds for a muted participant (and stops asking it).
        self._on_muted = on_muted
        self.limit_per_min = limit_per_min
        self.mute_s = mute_s
        self._clock = clock
        self._strikes: dict[str, deque[tuple[float, int]]] = {}
        self.muted: set[str] = set()
        self._muted_until: dict[str, float] = {}  # kept after leaving, for a rejoin
        self._tasks = TaskSet("participant_mute_crashed", room=room_id)

    def strike(self, identity: str, reason: str, *, weight: int = 1) -> None:
        if reason in _NOT_STRIKES or identity in self.muted:
            return
        now = self._clock()
        window = self._strikes.setdefault(identity, deque())
        window.append((now, max(1, weight)))
        while window and now - window[0][0] > 60.0:
            window.popleft()
        total = sum(w for _, w in window)
        if total > self.limit_per_min:
            self._mute(identity, total, reason)

    def strikes(self, identity: str) -> int:
        """The weight of `identity`'s strikes in the last minute (the operator's view)."""
        now = self._clock()
        return sum(w for at, w in self._strikes.get(identity, ()) if now - at <= 60.0)

    def _mute(self, identity: str, strikes: int, reason: str) -> None:
        self.muted.add(identity)
        self._strikes.pop(identity, None)
        self._muted_until[identity] = self._clock() + self.mute_s
        metrics.PARTICIPANTS_MUTED.inc()
        log.warning(
            "participant_muted",
            room=self.room_id,
            participant=identity,
            strikes=strikes,
            last_reason=reason,
        )
        self._revoke_later(identity)
        self._on_muted(identity, self.mute_s)

    def _revoke_later(self, identity: str) -> None:
        async def revoke() -> None:
            started = self._clock()
            try:
                await self._revoke(identity)
                log.info(
                    "participant_mute_applied",
                    room=self.room_id,
                    participant=identity,
                    took_s=round(self._clock() - started, 3),
                )
            except Exception as err:  # still refused here; LiveKit just keeps relaying it
                if isinstance(err, api.TwirpError) and err.code == api.TwirpErrorCode.NOT_FOUND:
                    # Gone before LiveKit heard of the mute: nothing left to revoke.
                    log.info("participant_mute_moot", room=self.room_id, participant=identity)
                    return
                log.error(
                    "participant_mute_failed",
                    room=self.room_id,
                    participant=identity,
                    error=str(err),
                )

        self._tasks.spawn(revoke())

    def forget(self, identity: str) -> None:
        """Left the room: its strikes go; a mute is remembered until it runs out."""
        self._strikes.pop(identity, None)
        self.muted.discard(identity)

    def rejoined(self, identity: str) -> None:
        """A new connection of `identity`: muted again while its earlier mute runs (its fresh
        token grants data publishing again, so LiveKit must be told once more)."""
        now = self._clock()
        self._muted_until = {i: t for i, t in self._muted_until.items() if t > now}
        until = self._muted_until.get(identity)
        if until is None:
            return
        self.muted.add(identity)
        log.warning(
            "participant_muted",
            room=self.room_id,
            participant=identity,
            strikes=0,
            last_reason="rejoined_while_muted",
            for_s=round(until - now, 1),
        )
        self._revoke_later(identity)
        self._on_muted(identity, until - now)


def livekit_revoker(url: str, api_key: str, api_secret: str, room: str) -> Revoke:
    """Revoke `can_publish_data` (keeping the rest) through the server API."""

    async def revoke(identity: str) -> None:
        async with api.LiveKitAPI(url, api_key, api_secret) as lk:
            await lk.room.update_participant(
                api.UpdateParticipantRequest(
                    room=room,
                    identity=identity,
                    permission=api.ParticipantPermission(
                        can_subscribe=True,
                        can_publish=True,
                        can_publish_data=False,
                        can_update_metadata=True,
                    ),
                )
            )

    return revoke
