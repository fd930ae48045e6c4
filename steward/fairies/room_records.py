"""The durable state of a room's fairies: what the runtime writes to Postgres as it happens
(`FairyStore`), and the room it loads back. Without a store (unit tests, benchmarks) the
runtime keeps everything in memory only."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from steward.fairies.memory import HistoryItem
from steward.fairies.persistence import (
    fairy_from,
    fairy_row,
    history_from,
    history_row,
    project_from,
    project_row,
    task_from,
    task_row,
    wait_from,
    wait_row,
)
from steward.fairies.project_task import Task
from steward.fairies.projects import Project
from steward.fairies.room_fairies import ONE_SHOT_PREFIX, Request, RoomFairies
from steward.store.fairies import FairyStore


class RoomRecords:
    """Writes a room's fairy state to Postgres as it changes and loads it back (in memory only
    without a store)."""

    def __init__(self, store: FairyStore | None) -> None:
        self.store = store
        self._wait_locks: dict[str, asyncio.Lock] = {}
        # Told what a save of the board changed, and that the waits were saved (the rooms'
        # project cards follow both).
        self.on_board_saved: (
            Callable[[RoomFairies, list[Project | Task]], Awaitable[None]] | None
        ) = None
        self.on_waits_saved: Callable[[RoomFairies], Awaitable[None]] | None = None

    async def load(self, room: RoomFairies) -> None:
        """The room's fairies, their history, projects, tasks and waits, as last written."""
        if self.store is None:
            return
        room_id = room.room_id
        for row in await self.store.load_fairies(room_id):
            fairy, cont = fairy_from(row)
            room.roster.fairies[fairy.id] = fairy
            state = room.fairy(fairy.id)
            state.continuations = cont
            state.asker = row.get("asker") or None
            state.model = row.get("model")
            state.history = [
                history_from(r) for r in await self.store.load_history(room_id, fairy.id)
            ]
        # The one-shotting fairies: history only, kept off the roster (no fairies row).
        for r in await self.store.load_histories(room_id, ONE_SHOT_PREFIX):
            state = room.fairy(r["fairy_id"])
            state.asker = r["fairy_id"].removeprefix(ONE_SHOT_PREFIX)
            state.history.append(history_from(r))
        room.board.load(
            [project_from(r) for r in await self.store.load_projects(room_id)],
            [task_from(r) for r in await self.store.load_tasks(room_id)],
        )
        room.waits.load([wait_from(r) for r in await self.store.load_waits(room_id)])

    async def enqueue(self, room: RoomFairies, fairy_id: str, req: Request) -> None:
        if self.store is not None:
            req.request_id = await self.store.enqueue(room.room_id, fairy_id, req.text, req.origin)

    async def set_request(self, req: Request, state: str, session_id: str | None = None) -> None:
        if self.store is not None and req.request_id is not None:
            await self.store.set_request(req.request_id, state, session_id)

    async def remember(self, room: RoomFairies, fairy_id: str, items: list[HistoryItem]) -> None:
        room.fairy(fairy_id).history.extend(items)
        await self.save_history(room, fairy_id, items)

    async def save_history(
        self, room: RoomFairies, fairy_id: str, items: list[HistoryItem]
    ) -> None:
        """Write items already in the fairy's history in memory."""
        if self.store is not None and items:
            await self.store.append_history(room.room_id, fairy_id, [history_row(i) for i in items])

    async def save_fairy(self, room: RoomFairies, fairy_id: str) -> None:
        if self.store is not None:
            state = room.fairy(fairy_id)
            fairy = room.roster.get(fairy_id)
            row = fairy_row(fairy, state.continuations, asker=state.asker, model=state.model)
            await self.store.save_fairy(room.room_id, row)

    async def save_board(self, room: RoomFairies) -> None:
        """The projects and tasks that changed since the last save."""
        changed, deleted = room.board.drain()
        if self.store is not None:
            for obj in changed:
                if isinstance(obj, Task):
                    await self.store.save_task(task_row(obj))
                else:
                    await self.store.save_project(project_row(obj))
            for tid in deleted:
                await self.store.delete_task(tid)
        if self.on_board_saved is not None and (changed or deleted):
            await self.on_board_saved(room, changed)

    async def save_waits(self, room: RoomFairies) -> None:
        """Write the room's waits as they are in memory now.

        A wait and the notify that ends it can run concurrently (a lead's `await` while its
        drone finishes), so incremental inserts and deletes on separate pool connections
        could commit in either order and leave a fulfilled wait stored, waking its fairy for
        nothing after a restart. Each save instead takes its snapshot under the room's lock
        and writes it whole, so the last write always matches memory."""
        if self.store is not None:
            async with self._wait_locks.setdefault(room.room_id, asyncio.Lock()):
                rows = [wait_row(w) for w in room.waits.conditions]
                await self.store.save_waits(room.room_id, rows)
        if self.on_waits_saved is not None:
            await self.on_waits_saved(room)
