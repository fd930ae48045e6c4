"""Bounded waits for the benchmarks and tests: nothing they wait for may hang them.

- `bounded`: await something within a deadline, named in the error if it is missed;
- `wait_until`: poll a condition (plain or awaitable) until it holds, within a deadline.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import Any


async def bounded(coro: Awaitable[Any], timeout: float, what: str) -> Any:
    """Await with a deadline; a benchmark never hangs."""
    try:
        return await asyncio.wait_for(coro, timeout)
    except TimeoutError as err:
        raise TimeoutError(f"{what} did not finish within {timeout:.0f}s") from err


async def wait_until(
    cond: Callable[[], object], timeout: float, what: str, *, every: float = 0.05
) -> None:
    """Until `cond()` is true (awaited first when it returns an awaitable, such as a query),
    checked every `every` seconds; `TimeoutError` naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        held = cond()
        if inspect.isawaitable(held):
            held = await held
        if held:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not within {timeout:.0f}s")
        await asyncio.sleep(every)
