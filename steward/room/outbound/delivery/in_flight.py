"""Backpressure on hand-over: live packets handed to LiveKit and not yet sent, at most a few.

Publishing never waits for LiveKit's completion of the previous packet (each is handed over
in order and its completion watched in the background), but a room keeps at most `limit` of
them outstanding: the next hand-over waits for the oldest to complete.
"""

from __future__ import annotations

import asyncio
import collections

# Live envelopes handed to LiveKit and not yet sent, per room; more wait (backpressure).
MAX_IN_FLIGHT = 64


class InFlight:
    """The packets handed to LiveKit and not yet sent; a new one waits while `limit` are
    outstanding."""

    def __init__(self, limit: int = MAX_IN_FLIGHT) -> None:
        self.limit = limit
        self._tasks: collections.deque[asyncio.Task[None]] = collections.deque()

    def add(self, task: asyncio.Task[None]) -> None:
        self._tasks.append(task)

    async def room_for_one_more(self) -> None:
        """Drop what completed; wait while `limit` are still outstanding."""
        tasks = self._tasks
        while tasks and (tasks[0].done() or len(tasks) >= self.limit):
            await asyncio.wait([tasks.popleft()])
