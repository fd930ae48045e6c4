"""`TaskSet`: background tasks an owner starts and forgets, but must not lose.

asyncio keeps only a weak reference to a running task, so whoever fires one off holds it
until it finishes; a failure nobody awaits would otherwise surface only as "exception was
never retrieved" at garbage collection. The set holds each task until done, logs its
failure under the owner's event name, and cancels or awaits what is left on close.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterator
from typing import Any, TypeVar

from steward.obs.logging import get_logger

log = get_logger(__name__)

T = TypeVar("T")

__all__ = ["TaskSet", "close_within"]

# How long one part of a shutdown may take before the rest goes on without it.
CLOSE_TIMEOUT_S = 10.0


async def close_within(
    aw: Awaitable[Any], what: str, timeout_s: float = CLOSE_TIMEOUT_S, **context: Any
) -> bool:
    """Await one step of a shutdown for at most `timeout_s`, then go on to the next step.

    A close that waits on a peer, a native SDK or a stuck task must not hold the rest of the
    shutdown (nor a test's teardown) forever, and one that fails must not skip the steps
    after it: both are logged with `what` and `context`, and False is returned."""
    try:
        async with asyncio.timeout(timeout_s):
            await aw
        return True
    except TimeoutError:
        log.warning("close_timed_out", what=what, timeout_s=timeout_s, **context)
    except Exception as err:
        log.warning("close_failed", what=what, error=repr(err), **context)
    return False


class TaskSet:
    """Running tasks of one owner. `failure_event` and `context` (e.g. `room=`) name the
    log line written when a task ends with an exception."""

    def __init__(self, failure_event: str = "background_task_failed", **context: Any) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()
        self._failure_event = failure_event
        self._context = context

    def spawn(self, aw: Awaitable[T]) -> asyncio.Task[T]:
        """Start `aw` (or adopt a task) and keep it until it finishes."""
        task = asyncio.ensure_future(aw)
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        err = task.exception()  # retrieved here, so asyncio does not warn about it later
        if err is not None:
            log.error(self._failure_event, **self._context, error=repr(err))

    def __len__(self) -> int:
        return len(self._tasks)

    def __iter__(self) -> Iterator[asyncio.Task[Any]]:
        return iter(list(self._tasks))

    def cancel(self) -> None:
        """Ask every running task to stop (without waiting for it)."""
        for task in list(self._tasks):
            task.cancel()

    async def wait(self) -> None:
        """Wait until the tasks running now have finished, however they end."""
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def close(self) -> None:
        """Cancel every running task and wait until all have ended."""
        self.cancel()
        await self.wait()
