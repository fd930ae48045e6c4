"""Liveness locks over a real Postgres and livekit-server (steward/store/liveness.py).

A steward whose liveness connection is ended while its process lives: another steward takes
its room long before the lease (30 s) expires; the old one's appends are fenced, it gives
the room up and publishes nothing after; the clients converge on the outbox. (A SIGKILLed
worker's rooms moving before its lease expires: test_failover.py.)
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest

from steward.service import StewardService
from steward.store.database import Database
from steward.store.leases import LeaseHeld, LeaseKeeper, RoomLeases
from steward.store.liveness import NAMESPACE, Liveness
from steward_tools.bench.failover import Room, unfenced
from steward_tools.bench.faults import converged
from steward_tools.livekit_server import LiveKitServer
from steward_tools.rigs.clients import TimedClient
from tests.conftest import wait_for
from tests.support.fixed_script import FixedScriptRunner
from tests.support.room import prompt_until_accepted, room_settings, spawn_join, stop_group

pytestmark = pytest.mark.integration

LEASE_S = 30.0  # long: within the test only the liveness lock can free the room


async def _end_liveness(database: Database, room: str) -> None:
    """pg_terminate_backend on the connection holding the room owner's liveness lock."""
    pid = await database.pool.fetchval(
        "SELECT l.pid FROM pg_locks l JOIN room_leases r ON l.objid::bigint = r.owner_key"
        " WHERE r.room_id = $1 AND l.locktype = 'advisory' AND l.classid = $2"
        " AND l.objsubid = 2 AND l.granted",
        room,
        NAMESPACE,
    )
    if pid is not None:
        assert await database.pool.fetchval("SELECT pg_terminate_backend($1, 5000)", pid)


@contextlib.asynccontextmanager
async def _no_new_connections(database: Database) -> AsyncIterator[None]:
    """Postgres refuses new connections to the database (open ones keep working)."""
    name = await database.pool.fetchval("SELECT current_database()")
    admin = await asyncpg.connect(database.url, database="postgres")  # not from inside it
    try:
        await admin.execute(f'ALTER DATABASE "{name}" WITH ALLOW_CONNECTIONS false')
        try:
            yield
        finally:
            await admin.execute(f'ALTER DATABASE "{name}" WITH ALLOW_CONNECTIONS true')
    finally:
        await admin.close()


async def test_a_lease_whose_liveness_lock_dropped_is_confirmed_in_postgres_not_locally(
    database: Database, room_name: str
) -> None:
    liveness = await Liveness(database.url).start()
    lost: list[str] = []
    mine = RoomLeases(database.pool, "mine", ttl_s=LEASE_S, owner_key=liveness.key)
    keeper = LeaseKeeper(mine, on_lost=lost.append, liveness=liveness)
    other = RoomLeases(database.pool, "other", ttl_s=LEASE_S, owner_key=None)
    try:
        await keeper.claim(room_name)
        with pytest.raises(LeaseHeld):
            await other.acquire(room_name)
        assert await keeper.confirm(room_name)
        epoch = liveness.epoch
        async with _no_new_connections(database):
            await _end_liveness(database, room_name)
            await wait_for(lambda: liveness.epoch != epoch, 10)
            taken = await other.acquire(room_name)  # 30 s before the lease expires
        assert taken.token == 2
        # The local deadline is still far: only the broken lock sends it to Postgres.
        assert not await keeper.confirm(room_name)
        assert lost == [room_name]
        await wait_for(lambda: liveness.held, 10)  # the lock comes back, same key
    finally:
        await keeper.close()
        await liveness.close()


async def test_a_steward_whose_liveness_connection_ends_loses_its_room_and_publishes_nothing(
    livekit_server: LiveKitServer, database: Database, room_name: str, tmp_path: Path
) -> None:
    log = tmp_path / "steward.log"
    old = spawn_join(
        livekit_server,
        database.url,
        room_name,
        log,
        STEWARD_SCRIPTED_TOKENS_PER_S="20",
        STEWARD_LEASE_SECONDS=str(LEASE_S),
    )
    second = StewardService(
        room_settings(livekit_server, database.url, steward_lease_seconds=LEASE_S),
        database=database,
        runner=lambda: FixedScriptRunner(),
    )
    await second.start(http=False)
    key, secret = livekit_server.api_key, livekit_server.api_secret
    clients = [
        TimedClient.create(livekit_server.url, key, secret, room=room_name, identity=who)
        for who in ("ann", "bob")
    ]
    room = Room(room_name, [c for c in clients if isinstance(c, TimedClient)])
    try:
        for c in room.clients:
            room.watch(c)
            await c.connect()
        await wait_for(lambda: "steward serving" in log.read_text(errors="replace"), 60)
        await wait_for(room.served, 30)
        first = room.steward(room.clients[0])
        assert first is not None
        sid = await prompt_until_accepted(room.clients[0], "draw a flow chart of signup in 6 steps")
        await wait_for(lambda: room.clients[0].applied_seq(sid) >= 2, timeout=30)
        # Its liveness connection ends and cannot come back for now (a partition): the
        # process lives on with its pooled connections.
        async with _no_new_connections(database):
            await _end_liveness(database, room_name)
            lease = await second.claim(room_name)
        assert lease.token == 2  # taken long before the lease's expiry
        taken_at = await database.pool.fetchval(
            "SELECT acquired_at FROM room_leases WHERE room_id = $1", room_name
        )
        # Still streaming: its next append is fenced; its next renewal fails, it leaves.
        text = lambda: log.read_text(errors="replace")  # noqa: E731
        await wait_for(lambda: "liveness_lost" in text(), 10)
        await wait_for(lambda: "outbox_append_fenced" in text(), 30)
        await wait_for(lambda: "room_given_up" in text(), 30)
        assert old.poll() is None  # it gave the room up and keeps running
        late = await database.pool.fetchval(
            "SELECT count(*) FROM outbox WHERE session_id = $1 AND created_at > $2", sid, taken_at
        )
        assert late == 0  # nothing from the old steward after the takeover
        runtime = await second.join(room_name)
        assert runtime.broadcaster.fence == 2
        await wait_for(lambda: room.served(first.sid), 30)
        again = await prompt_until_accepted(room.clients[0], "draw a box")
        assert await room.clients[0].wait_status(again, timeout=30) == "done"
        assert await converged(room.clients, database.url, room_name, 30)
        # Every envelope the clients got passed the fenced append (none from the old one).
        assert room.received, "the clients' envelopes were not recorded"
        assert await unfenced(database.url, [room]) == [0]
    finally:
        if old.poll() is None:
            await stop_group(old)
        for c in room.clients:
            await c.disconnect()
        await second.close()
