"""Migrations apply on a real Postgres, twice without change, and concurrently."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest

from steward.store.migrate import discover, migrate

pytestmark = pytest.mark.integration


async def _schema_snapshot(conn: asyncpg.Connection) -> list[tuple[str, str, str]]:
    rows = await conn.fetch(
        "SELECT table_name, column_name, data_type FROM information_schema.columns"
        " WHERE table_schema = 'public' ORDER BY 1, 2"
    )
    return [(r[0], r[1], r[2]) for r in rows]


async def test_apply_twice_changes_nothing(fresh_db_url: str) -> None:
    conn = await asyncpg.connect(fresh_db_url)
    try:
        first = await migrate(conn)
        assert first == [m.name for m in discover()]
        snap = await _schema_snapshot(conn)
        assert ("outbox", "payload", "jsonb") in snap
        second = await migrate(conn)
        assert second == []
        assert await _schema_snapshot(conn) == snap
        count = await conn.fetchval("SELECT count(*) FROM schema_migrations")
        assert count == len(discover())
    finally:
        await conn.close()


async def test_concurrent_migrators_apply_once(fresh_db_url: str) -> None:
    conns = [await asyncpg.connect(fresh_db_url) for _ in range(3)]
    try:
        results = await asyncio.gather(*(migrate(c) for c in conns))
        applied = [name for r in results for name in r]
        assert sorted(applied) == sorted(m.name for m in discover())
    finally:
        for c in conns:
            await c.close()
