"""A watchdog that ends a run which stops making progress, within a hard cap.

A session streaming slowly under load is still useful; one whose model or context has gone
silent is not. `progress()` pushes the deadline `idle_s` ahead (never past `max_s` from the
start); when it passes, the guarded block is cancelled and `TimeoutError` raised.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class Watchdog:
    """Ends a guarded run that makes no progress for `idle_s`, or that runs past `max_s`."""

    def __init__(self, idle_s: float, max_s: float) -> None:
        self.idle_s = idle_s
        self.max_s = max_s
        self._timeout: asyncio.Timeout | None = None
        self._hard = 0.0

    @asynccontextmanager
    async def guard(self) -> AsyncIterator[Watchdog]:
        loop = asyncio.get_running_loop()
        self._hard = loop.time() + self.max_s
        async with asyncio.timeout_at(min(loop.time() + self.idle_s, self._hard)) as timeout:
            self._timeout = timeout
            try:
                yield self
            finally:
                self._timeout = None

    def progress(self) -> None:
        if self._timeout is not None and not self._timeout.expired():
            now = asyncio.get_running_loop().time()
            self._timeout.reschedule(min(now + self.idle_s, self._hard))

    def deadline(self) -> float | None:
        """When the guarded block ends unless progress comes (event loop time); None outside
        a guard."""
        return None if self._timeout is None else self._timeout.when()
