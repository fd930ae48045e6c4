"""What each participant was sent and has not acked yet, and which of its acks are valid.

An ack is valid only for an envelope that was sent to its sender: a session it was never
sent, or a seq above the highest it was sent, is refused (a peer cannot ack, and so skip in
replays, what it never had). A cumulative ack covers every unacked envelope of its session up
to its seq. The round trip of an envelope acked without a retransmit feeds the participant's
`AckClock` (Karn: a retransmitted one is never timed).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from steward.protocol.messages import Ack
from steward.room.outbound.delivery.ack_clock import AckClock

Key = tuple[str, int]  # (session_id, seq)


@dataclass
class Pending:
    """One envelope copy sent to one participant and not acked by it yet."""

    payload: bytes
    last_sent: float
    attempts: int = 0
    first_sent: float = 0.0
    # False while LiveKit still holds the packet: its retransmit timer starts when it left.
    sent: bool = True
    replay: bool = False  # a copy of a requested or room replay (`ResyncGate`)


class AckTracker:
    """What each participant was sent and has not acked, and the check that an ack is for something
    sent to it."""

    def __init__(self) -> None:
        # participant → (session_id, seq) → pending copy, in send order.
        self._pending: dict[str, dict[Key, Pending]] = {}
        self._clocks: dict[str, AckClock] = {}
        # participant → session → highest seq sent to it (acks above it are refused).
        self._sent_to: dict[str, dict[str, int]] = {}
        # Set when a copy is tracked: the retransmit loop sleeps on it while nothing is pending.
        self.added = asyncio.Event()

    def track(
        self, participant: str, key: Key, payload: bytes, now: float, *, replay: bool = False
    ) -> Pending:
        """A copy is being handed to LiveKit for `participant`: pending until acked."""
        entry = Pending(payload, now, sent=False, first_sent=now, replay=replay)
        self._pending.setdefault(participant, {})[key] = entry
        self.mark_sent(participant, *key)
        self.added.set()
        return entry

    def mark_sent(self, participant: str, session_id: str, seq: int) -> None:
        """`participant` may ack the session up to `seq` (also for untracked replays)."""
        sent = self._sent_to.setdefault(participant, {})
        if seq > sent.get(session_id, 0):
            sent[session_id] = seq

    def refusal(self, participant: str, ack: Ack) -> str | None:
        """Why the ack is invalid (never sent to them), or None."""
        sent = self._sent_to.get(participant, {}).get(ack.session_id)
        if sent is None:
            return "unknown_session"
        return "unsent_seq" if ack.seq > sent else None

    def take(self, participant: str, ack: Ack, now: float) -> list[Key]:
        """Clear what a valid ack covers; returns those keys, the ack's own last."""
        pending = self._pending.get(participant, {})
        key = (ack.session_id, ack.seq)
        covered = [key]
        if ack.cumulative:  # and every unacked envelope of the session before it
            covered = [k for k in pending if k[0] == ack.session_id and k[1] < ack.seq] + covered
        entry = pending.pop(key, None)
        for k in covered[:-1]:
            del pending[k]
        clock = self._clocks.setdefault(participant, AckClock())
        clock.last_ack_at = now
        if entry is not None and entry.attempts == 0:  # Karn: never time a retransmit
            clock.sample(now - entry.last_sent)
        return covered

    def clock(self, participant: str, now: float) -> AckClock:
        """The participant's clock; one first seen now counts as having acked now."""
        return self._clocks.setdefault(participant, AckClock(last_ack_at=now))

    def by_participant(self) -> list[tuple[str, dict[Key, Pending]]]:
        """Every participant's pending copies (the live tables: callers may remove entries)."""
        return list(self._pending.items())

    def of(self, participant: str) -> dict[Key, Pending]:
        return self._pending.get(participant, {})

    def any_pending(self) -> bool:
        return any(self._pending.values())

    def pending_anywhere(self, key: Key) -> bool:
        return any(key in p for p in self._pending.values())

    def unacked(self, participant: str) -> int:
        return len(self._pending.get(participant, {}))

    def unacked_in(self, session_id: str) -> int:
        """Copies of the session's envelopes some participant has not acked yet."""
        return sum(1 for p in self._pending.values() for key in p if key[0] == session_id)

    def total(self) -> int:
        return sum(len(p) for p in self._pending.values())

    def forget(self, participant: str) -> dict[Key, Pending]:
        """The participant left: nothing is pending for it any more (returns what was)."""
        unacked = self._pending.pop(participant, None) or {}
        self._clocks.pop(participant, None)
        self._sent_to.pop(participant, None)
        return unacked
