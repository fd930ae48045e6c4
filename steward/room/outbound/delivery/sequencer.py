"""Numbering: each session's strictly increasing seq and the room-wide order of envelopes.

A session that already has rows in the outbox (the room's relay session after a restart, an
interrupted one) continues after them: its last seq is read from the outbox once, on its first
send. A session id just minted here has no rows, so `new_session` spares that round trip.
"""

from __future__ import annotations

from steward.store.outbox import Outbox


class Sequencer:
    """Hands out each session's next seq and the room's next order, continuing after what the outbox
    holds."""

    def __init__(self, outbox: Outbox) -> None:
        self._outbox = outbox
        self._seq: dict[str, int] = {}
        self._room_order = 0

    async def start(self, room_id: str) -> None:
        """Continue the room's order after what the outbox holds."""
        self._room_order = await self._outbox.max_room_order(room_id)

    @property
    def room_order(self) -> int:
        """The room-wide order of the last envelope numbered (rebuilt from the outbox)."""
        return self._room_order

    def new_session(self, session_id: str) -> None:
        self._seq.setdefault(session_id, 0)

    async def last(self, session_id: str) -> int:
        """The session's last seq numbered, read once from the outbox when not known here."""
        if session_id not in self._seq:
            found = await self._outbox.max_seq(session_id)
            return self._seq.setdefault(session_id, found)  # a concurrent first send won
        return self._seq[session_id]

    def next(self, session_id: str) -> tuple[int, int]:
        """Number one more envelope of a known session: (its seq, its room order)."""
        seq = self._seq[session_id] + 1
        self._seq[session_id] = seq
        self._room_order += 1
        return seq, self._room_order

    def renumber(self, session_id: str) -> None:
        """What was numbered was not persisted: read the session's last seq again."""
        self._seq.pop(session_id, None)
