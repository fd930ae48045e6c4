"""Outbox appends on a real Postgres: the held connection, the pool beside it, idle release,
and a Postgres-side disconnect of the held connection."""

from __future__ import annotations

import asyncio

import pytest

from steward.store import outbox as outbox_module
from steward.store.database import Database
from steward.store.outbox import Outbox

pytestmark = pytest.mark.integration


async def _rows(database: Database, session: str) -> list[int]:
    rows = await database.pool.fetch(
        "SELECT seq FROM outbox WHERE session_id = $1 ORDER BY seq", session
    )
    return [r["seq"] for r in rows]


async def test_concurrent_appends_all_land_and_the_held_connection_is_released_when_idle(
    database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(outbox_module, "HELD_IDLE_S", 0.2)
    outbox = Outbox(database.stream_pool)
    await outbox.ensure_room("r1", "relay")
    free_before = database.stream_pool.get_idle_size() + (
        database.stream_pool.get_max_size() - database.stream_pool.get_size()
    )
    # Twenty rooms' worth of appends at once: one goes through the held connection at a
    # time, the others through the pool; none is lost or written twice.
    await asyncio.gather(
        *(outbox.append("r1", f"s{i % 4}", i // 4 + 1, i + 1, False, "{}") for i in range(20))
    )
    for s in range(4):
        assert await _rows(database, f"s{s}") == [1, 2, 3, 4, 5]
    assert outbox._held is not None
    await asyncio.sleep(0.6)
    assert outbox._held is None, "the held connection was not handed back after idling"
    free_after = database.stream_pool.get_idle_size() + (
        database.stream_pool.get_max_size() - database.stream_pool.get_size()
    )
    assert free_after == free_before


async def test_a_terminated_held_connection_fails_one_append_and_the_next_one_lands(
    database: Database,
) -> None:
    outbox = Outbox(database.stream_pool)
    await outbox.ensure_room("r2", "relay")
    await outbox.append("r2", "t", 1, 1, False, "{}")
    assert outbox._held is not None
    pid = outbox._held.get_server_pid()
    await database.pool.execute("SELECT pg_terminate_backend($1)", pid)
    # Depending on when the pool notices, the first append after it fails once (the caller
    # retries, as the broadcaster's resend does) or already goes through a fresh connection.
    try:
        await outbox.append("r2", "t", 2, 2, False, "{}")
    except Exception:
        await outbox.append("r2", "t", 2, 2, False, "{}")
    assert await _rows(database, "t") == [1, 2]
    assert outbox._held is not None and outbox._held.get_server_pid() != pid
    await outbox.close()
