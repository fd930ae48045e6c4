"""Opening the database: DATABASE_URL, or the embedded server; pool plus migrations."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import asyncpg
from tenacity import retry, retry_if_exception_type, stop_after_delay, wait_exponential

from steward.config import Settings
from steward.store.embedded import EmbeddedPostgres
from steward.store.migrate import migrate


@dataclass
class Database:
    """The open database: its URL, the main pool, the envelope stream's pool and the embedded server
    if one runs."""

    url: str
    pool: asyncpg.Pool
    # For the envelope stream (outbox, acks): commits do not wait for the WAL flush. A
    # steward crash loses nothing (the server has the rows); only a crash of Postgres itself
    # can lose the last ~200 ms of envelopes, which browsers then re-request by resync.
    stream_pool: asyncpg.Pool
    embedded: EmbeddedPostgres | None = field(default=None)

    async def close(self) -> None:
        await self.stream_pool.close()
        await self.pool.close()
        if self.embedded is not None:
            self.embedded.stop()


async def resolve_url(settings: Settings) -> tuple[str, EmbeddedPostgres | None]:
    if settings.database_url:
        return settings.database_url, None
    embedded = EmbeddedPostgres(settings.steward_data_dir / "pg")
    return await embedded.astart(), embedded


@retry(
    retry=retry_if_exception_type((OSError, asyncpg.CannotConnectNowError)),
    wait=wait_exponential(multiplier=0.1, max=2),
    stop=stop_after_delay(30),
    reraise=True,
)
async def _create_pool(
    url: str,
    min_size: int,
    max_size: int,
    server_settings: dict[str, str] | None = None,
    reset: Callable[[asyncpg.Connection], Awaitable[None]] | None = None,
) -> asyncpg.Pool:
    return await asyncpg.create_pool(
        url, min_size=min_size, max_size=max_size, server_settings=server_settings, reset=reset
    )


async def _keep_session(conn: asyncpg.Connection) -> None:
    """Release without asyncpg's reset query (a second round trip per statement). Safe for
    the stream pool only: its statements leave no session state (no SET, LISTEN or advisory
    locks), and an open transaction is still rolled back by asyncpg itself."""


# Connections per pool when a caller names no size; `open_database` opens two pools.
DEFAULT_POOL_SIZE = 10


async def open_database(
    settings: Settings,
    *,
    run_migrations: bool = True,
    min_size: int = 1,
    max_size: int = DEFAULT_POOL_SIZE,
) -> Database:
    url, embedded = await resolve_url(settings)
    pool = await _create_pool(url, min_size, max_size)
    if run_migrations:
        async with pool.acquire() as conn:
            await migrate(conn)
    stream_pool = await _create_pool(
        url, min_size, max_size, server_settings={"synchronous_commit": "off"}, reset=_keep_session
    )
    return Database(url=url, pool=pool, stream_pool=stream_pool, embedded=embedded)
