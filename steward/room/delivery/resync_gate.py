"""Replays to a participant that does not ack: once, then nothing until it acks.

A resync replays a session, or the room's whole history, from the outbox; sent to a
participant that never acks, each one is pure amplification (a few bytes of request, hundreds
of envelopes out), and so is every retransmit to it. So a participant that was sent a replay
and has acked nothing since gets no further replay (requested, room or after exhausted
retransmits) and no retransmits; its live envelopes still reach it with everyone's. Its
first valid ack lifts that.
"""

from __future__ import annotations


class ResyncGate:
    def __init__(self) -> None:
        self._owing: set[str] = set()
        self.refused = 0

    def owes_ack(self, participant: str) -> bool:
        """Replayed to and silent since: no replay, no retransmit until it acks."""
        return participant in self._owing

    def replayed(self, participant: str) -> None:
        self._owing.add(participant)

    def acked(self, participant: str) -> None:
        self._owing.discard(participant)

    def forget(self, participant: str) -> None:
        self._owing.discard(participant)
