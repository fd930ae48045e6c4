"""Replays to a participant that does not ack: once, then nothing until it acks.

A resync replays a session, or the room's whole history, from the outbox; sent to a
participant that never acks, each one is pure amplification (a few bytes of request, hundreds
of envelopes out), and so is every retransmit to it. So a participant that was sent a replay
and has acked nothing since gets no further replay (requested, room or after exhausted
retransmits) and no retransmits but those of that replay's own copies (`retransmit_plan`);
its live envelopes still reach it with everyone's. Its first valid ack lifts that.

So does a resync request that shows the replay arrived: one asking for a replayed session
from a seq at or past the first seq that replay sent it. A browser whose one ack of a short
replay was lost (a reconnect, a lossy link) has nothing else left to ack once live traffic
stops, and would otherwise keep a gap for good. Each such lift moves the next replay's start
forward, so a peer that lies about its seq gains at most one shorter replay per lie.
"""

from __future__ import annotations

from collections.abc import Iterable


class ResyncGate:
    """Who was replayed to and has not acked since: they get no further replay or retransmit until
    they ack."""

    def __init__(self) -> None:
        # participant → session → the first seq of it replayed to them since their last ack.
        self._owing: dict[str, dict[str, int]] = {}
        self.refused = 0

    def owes_ack(self, participant: str) -> bool:
        """Replayed to and silent since: no replay, no retransmit until it acks."""
        return participant in self._owing

    def replayed(self, participant: str, sent: Iterable[tuple[str, int]] = ()) -> None:
        """A replay went out; `sent`: the (session, seq) of each envelope in it."""
        owing = self._owing.setdefault(participant, {})
        for session_id, seq in sent:
            owing[session_id] = min(seq, owing.get(session_id, seq))

    def shows_receipt(self, participant: str, session_id: str, last_seq: int) -> bool:
        """A resync from `last_seq` proves the participant applied what was replayed to it
        of that session (its first envelope at least)."""
        first = self._owing.get(participant, {}).get(session_id)
        return first is not None and last_seq >= first

    def acked(self, participant: str) -> None:
        self._owing.pop(participant, None)

    def forget(self, participant: str) -> None:
        self._owing.pop(participant, None)
