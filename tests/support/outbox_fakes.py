"""Stand-ins for the outbox and its Postgres pool, for broadcaster and outbox unit tests."""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg

from steward.store.outbox import OutboxRow


class MemoryOutbox:
    """Just enough of `Outbox` for the broadcaster, in memory."""

    def __init__(self) -> None:
        self.rows: list[OutboxRow] = []

    async def max_seq(self, session_id: str) -> int:
        return max((r.seq for r in self.rows if r.session_id == session_id), default=0)

    async def append(
        self,
        room_id: str,
        session_id: str,
        seq: int,
        order: int,
        partial: bool,
        payload: str,
        *,
        if_absent: bool = False,
        fence: int | None = None,
    ) -> None:
        assert fence is None  # no lease in these tests
        if any(r.session_id == session_id and r.seq == seq for r in self.rows):
            assert if_absent, f"duplicate seq {seq}"
            return
        self.rows.append(OutboxRow(session_id, seq, order, partial, payload))

    async def session_after(self, room_id: str, session_id: str, last_seq: int) -> list[OutboxRow]:
        return [r for r in self.rows if r.session_id == session_id and r.seq > last_seq]


class StallingOutbox(MemoryOutbox):
    """The INSERT of seq `stall_at` hangs until cancelled; `commits` says whether that row
    had reached Postgres when the caller's cancellation cut it off."""

    def __init__(self, stall_at: int, commits: bool) -> None:
        super().__init__()
        self.stall_at, self.commits, self.stalled = stall_at, commits, asyncio.Event()

    async def append(self, room_id: str, session_id: str, seq: int, *a: Any, **kw: Any) -> None:
        if seq == self.stall_at and not self.stalled.is_set():
            if self.commits:
                await super().append(room_id, session_id, seq, *a, **kw)
            self.stalled.set()
            await asyncio.Event().wait()  # until cancelled
        await super().append(room_id, session_id, seq, *a, **kw)


class FlakyPool:
    """A pool whose first INSERTs fail as during a Postgres restart."""

    def __init__(self, failures: list[Exception]) -> None:
        self.failures = failures
        self.calls = 0

    async def execute(self, query: str, *args: Any) -> None:
        self.calls += 1
        if self.failures:
            failure = self.failures.pop(0)
            if isinstance(failure, asyncpg.UniqueViolationError) and "ON CONFLICT" in query:
                return  # what Postgres does for an if-absent INSERT of a row already there
            raise failure
