"""Statements that never reached Postgres, tried again while it comes back.

A Postgres restarting refuses connections (its socket gone, or "starting up"): a statement that
failed that way was never sent, so sending it again cannot apply it twice. A connection that
died mid-statement is another matter (it may have committed) and is not retried here; the
outbox, whose appends are idempotent, retries those itself."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import asyncpg
from tenacity import AsyncRetrying, retry_if_exception_type, stop_after_delay, wait_exponential

from steward.obs.logging import get_logger

log = get_logger(__name__)

T = TypeVar("T")

# What a connect to a Postgres that is down or starting raises: nothing was sent. asyncpg's
# InternalClientError "cannot switch to state …; another operation is in progress" is raised
# the same way, before sending, on a pooled connection still reading the shutdown's error.
NOT_SENT = (
    FileNotFoundError,
    ConnectionRefusedError,
    asyncpg.CannotConnectNowError,
    asyncpg.InternalClientError,
)
# A restart takes a few seconds; a Postgres gone for longer fails the caller as before.
RECONNECT_WITHIN_S = 15.0


async def when_reachable(
    call: Callable[[], Awaitable[T]],
    what: str,
    *,
    within: float = RECONNECT_WITHIN_S,
    retry_on: tuple[type[BaseException], ...] = NOT_SENT,
) -> T:
    """`call()`, tried again (bounded by `within`) while Postgres refuses connections. A
    caller whose statement is safe to repeat after any transient failure (an idempotent
    append) widens `retry_on`."""
    retrying = AsyncRetrying(
        retry=retry_if_exception_type(retry_on),
        wait=wait_exponential(multiplier=0.05, max=1.0),
        stop=stop_after_delay(within),
        reraise=True,
        before_sleep=lambda state: log.warning(
            "postgres_unreachable_retry", what=what, attempt=state.attempt_number
        ),
    )
    async for attempt in retrying:
        with attempt:
            return await call()
    raise AssertionError("unreachable: tenacity returns or raises")


class ReachablePool:
    """A pool whose calls wait out a Postgres restart (`when_reachable`): each one-statement
    call, and `acquire` (a transaction's connection: a connect refused sent nothing)."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    @contextlib.asynccontextmanager
    async def acquire(self) -> AsyncIterator[Any]:
        conn = await when_reachable(lambda: self._pool.acquire(), "acquire")
        try:
            yield conn
        finally:
            await self._pool.release(conn)

    async def execute(self, query: str, *args: Any) -> str:
        return await when_reachable(lambda: self._pool.execute(query, *args), "execute")

    async def executemany(self, query: str, args: Any) -> None:
        await when_reachable(lambda: self._pool.executemany(query, args), "executemany")

    async def fetch(self, query: str, *args: Any) -> list[asyncpg.Record]:
        return await when_reachable(lambda: self._pool.fetch(query, *args), "fetch")

    async def fetchval(self, query: str, *args: Any) -> Any:
        return await when_reachable(lambda: self._pool.fetchval(query, *args), "fetchval")

    async def fetchrow(self, query: str, *args: Any) -> asyncpg.Record | None:
        return await when_reachable(lambda: self._pool.fetchrow(query, *args), "fetchrow")
