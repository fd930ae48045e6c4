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
        self.inserts: list[list[int]] = []  # the seqs of each INSERT

    async def max_seq(self, session_id: str) -> int:
        return max((r.seq for r in self.rows if r.session_id == session_id), default=0)

    async def append_many(
        self,
        room_id: str,
        rows: list[OutboxRow],
        *,
        if_absent: bool = False,
        fence: int | None = None,
    ) -> None:
        assert fence is None  # no lease in these tests
        self.inserts.append([r.seq for r in rows])
        for row in rows:
            if any(r.session_id == row.session_id and r.seq == row.seq for r in self.rows):
                assert if_absent, f"duplicate seq {row.seq}"
                continue
            self.rows.append(row)

    async def session_after(self, room_id: str, session_id: str, last_seq: int) -> list[OutboxRow]:
        return [r for r in self.rows if r.session_id == session_id and r.seq > last_seq]


class StallingOutbox(MemoryOutbox):
    """The INSERT holding seq `stall_at` waits until `release` is set."""

    def __init__(self, stall_at: int) -> None:
        super().__init__()
        self.stall_at, self.stalled, self.release = stall_at, asyncio.Event(), asyncio.Event()

    async def append_many(self, room_id: str, rows: list[OutboxRow], **kw: Any) -> None:
        if any(r.seq == self.stall_at for r in rows) and not self.stalled.is_set():
            self.stalled.set()
            await self.release.wait()
        await super().append_many(room_id, rows, **kw)


class FlakyPool:
    """A pool whose first INSERTs fail as during a Postgres restart."""

    def __init__(self, failures: list[Exception]) -> None:
        self.failures = failures
        self.calls = 0

    async def execute(self, query: str, *args: Any) -> str:
        self.calls += 1
        if self.failures:
            failure = self.failures.pop(0)
            if isinstance(failure, asyncpg.UniqueViolationError) and "ON CONFLICT" in query:
                return "INSERT 0 0"  # an if-absent INSERT of rows already there
            raise failure
        return f"INSERT 0 {len(args[1])}"

    async def fetchval(self, query: str, *args: Any) -> int:
        return len(args[0])  # every row asked about is there (the lost attempt committed)
