"""Room leases over a real Postgres and livekit-server: one steward per room, and a steward
frozen past its lease publishes nothing once another has the room (the fencing token)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import threading
from pathlib import Path

import asyncpg
import pytest
from structlog.testing import capture_logs

from steward.service import StewardService
from steward.store.database import Database
from steward.store.leases import LeaseHeld, LeaseLost, RoomLeases
from steward.store.outbox import Outbox
from steward_tools.headless.client import HeadlessClient
from steward_tools.livekit_server import LiveKitServer
from tests.conftest import wait_for
from tests.support.clock import lapse_leases
from tests.support.fixed_script import FixedScriptRunner
from tests.support.room import (
    close_all,
    join_clients,
    prompt_until_accepted,
    room_settings,
    spawn_join,
)

pytestmark = pytest.mark.integration

# Long enough that a loaded machine never lets a lease lapse between two statements; a
# lapse is made by moving the lease's expiry into the past (`_lapse`), not by sleeping.
TTL = 30.0


async def _lapse(database: Database, *rooms: str) -> None:
    """The leases of `rooms` run out now, as if TTL and a second had passed."""
    await lapse_leases(database.pool, list(rooms), TTL + 1.0)


async def test_a_leased_room_is_refused_until_its_lease_expires_then_old_appends_fail(
    database: Database,
) -> None:
    outbox = Outbox(database.stream_pool)
    await outbox.ensure_room("r", "relay")
    first = RoomLeases(database.pool, "w1", ttl_s=TTL)
    second = RoomLeases(database.pool, "w2", ttl_s=TTL)
    lease1 = await first.acquire("r")
    with pytest.raises(LeaseHeld):
        await second.acquire("r")
    await outbox.append("r", "s1", 1, 1, False, "{}", fence=lease1.token)
    assert await first.renew(lease1)  # renewed: still refused to the other
    with pytest.raises(LeaseHeld):
        await second.acquire("r")
    await _lapse(database, "r")  # lapsed: the other takes it with a new token
    lease2 = await second.acquire("r")
    assert lease2.token == lease1.token + 1
    with capture_logs() as logs, pytest.raises(LeaseLost):
        await outbox.append("r", "s1", 2, 2, False, "{}", fence=lease1.token)
    assert any(e["event"] == "outbox_append_fenced" for e in logs)
    assert not await first.renew(lease1)
    await outbox.append("r", "s2", 1, 3, False, "{}", fence=lease2.token)
    assert [r.session_id for r in await outbox.room_history("r")] == ["s1", "s2"]
    # Released: free at once, and the releaser's appends are refused from then on.
    await second.release(lease2)
    lease3 = await first.acquire("r")
    with pytest.raises(LeaseLost):
        await outbox.append("r", "s2", 2, 4, False, "{}", fence=lease2.token, if_absent=True)
    # A lease that lapsed while nobody took the room is still its holder's (Postgres away).
    await _lapse(database, "r")
    await outbox.append("r", "s3", 1, 5, False, "{}", fence=lease3.token)
    row = await first.get("r")
    assert row is not None and not row.expired and row.token == lease3.token


async def _appends(database: Database, *, blocked: bool) -> int:
    """Outbox INSERTs running now: waiting on a lock (`blocked`), or running at all."""
    wait = "wait_event_type = 'Lock'" if blocked else "state = 'active'"
    count = await database.pool.fetchval(
        f"SELECT count(*) FROM pg_stat_activity WHERE {wait} AND query LIKE 'INSERT INTO outbox%'"
    )
    return int(count)


async def _until_blocked(database: Database) -> None:
    for _ in range(200):
        if await _appends(database, blocked=True):
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the steward never appended")


async def _until_ran(database: Database) -> None:
    """The blocked INSERT has run to its end in Postgres (its client may still be frozen)."""
    for _ in range(200):
        if not await _appends(database, blocked=False):
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the blocked append never ran")


async def _rows(database: Database, room: str) -> list[tuple[str, int, str]]:
    rows = await database.pool.fetch(
        "SELECT session_id, seq, payload::text AS p FROM outbox WHERE room_id = $1"
        " ORDER BY session_id, seq",
        room,
    )
    return [(r["session_id"], r["seq"], r["p"]) for r in rows]


async def test_one_statement_renews_every_held_lease_and_names_the_ones_lost(
    database: Database,
) -> None:
    first = RoomLeases(database.pool, "w1", ttl_s=TTL)
    second = RoomLeases(database.pool, "w2", ttl_s=TTL)
    kept = [await first.acquire(room) for room in ("m1", "m2")]
    taken = await first.acquire("m3")
    await _lapse(database, "m1", "m2", "m3")  # all three lapse; another steward takes m3
    await second.acquire("m3")
    assert await first.renew_many([*kept, taken]) == {"m1", "m2"}
    with pytest.raises(LeaseHeld):  # renewed: still refused to the other
        await second.acquire("m1")
    assert await first.renew_many([]) == set()


async def test_a_steward_frozen_past_its_lease_publishes_nothing_after_a_takeover(
    livekit_server: LiveKitServer, database: Database, room_name: str, tmp_path: Path
) -> None:
    log = tmp_path / "steward.log"
    frozen = spawn_join(
        livekit_server,
        database.url,
        room_name,
        log,
        STEWARD_SCRIPTED_TOKENS_PER_S="60",
        STEWARD_LEASE_SECONDS="1.5",
    )
    clients: list[HeadlessClient] = []
    second = StewardService(
        room_settings(livekit_server, database.url, steward_lease_seconds=1.5),
        database=database,
        runner=lambda: FixedScriptRunner(),
    )
    await second.start(http=False)
    try:
        await wait_for(lambda: "steward serving" in log.read_text(errors="replace"), timeout=60)
        with pytest.raises(LeaseHeld):  # served: the second steward never connects
            await second.claim(room_name, wait_s=2.0)
        assert room_name not in second.rooms
        clients = await join_clients(livekit_server, room_name, ["alice"])
        await wait_for(lambda: "canvas-steward" in clients[0].room.remote_participants)
        sid = await prompt_until_accepted(clients[0], "draw a flow chart of signup with six steps")
        await wait_for(lambda: clients[0].applied_seq(sid) >= 2, timeout=30)
        # Catch it mid-append: its INSERT waits on a table lock while it is frozen, so the
        # statement runs only after another steward took the room.
        blocker = await asyncpg.connect(database.url)
        lock = blocker.transaction()
        await lock.start()
        await blocker.execute("LOCK TABLE outbox IN SHARE MODE")
        await _until_blocked(database)
        os.killpg(frozen.pid, signal.SIGSTOP)
        await second.claim(room_name, wait_s=5.0)  # its lease lapses while it is frozen
        lease = await RoomLeases(database.pool, "-", ttl_s=1).get(room_name)
        assert lease is not None and lease.owner == second.owner and lease.token == 2
        before = await _rows(database, room_name)
        await lock.rollback()
        await blocker.close()
        await _until_ran(database)  # the stale INSERT ran (and found the new token)
        os.killpg(frozen.pid, signal.SIGCONT)
        await wait_for(lambda: "outbox_append_fenced" in log.read_text(errors="replace"), 20)
        await wait_for(lambda: "room_given_up" in log.read_text(errors="replace"), 20)
        # Its room is closed (sessions, broadcaster and connection ended): nothing of it is
        # left to append.
        await wait_for(lambda: "room_closed" in log.read_text(errors="replace"), 20)
        assert await _rows(database, room_name) == before  # nothing from the stale steward
        assert frozen.poll() is None  # it gave the room up and keeps running
        runtime = await second.join(room_name)
        assert runtime.broadcaster.fence == 2
        next_sid = await prompt_until_accepted(clients[0], "draw a box")
        assert await clients[0].wait_status(next_sid, timeout=30) == "done"
    finally:
        if frozen.poll() is None:
            os.killpg(frozen.pid, signal.SIGCONT)
            os.killpg(frozen.pid, signal.SIGKILL)
        frozen.wait(timeout=10)
        await close_all(clients)
        await second.close()


def _take_over(db_url: str, room: str) -> None:
    """Another steward, in a thread of its own, takes the room once its lease has lapsed."""

    async def take() -> None:
        pool = await asyncpg.create_pool(db_url, min_size=1, max_size=1)
        try:
            for _ in range(100):
                with contextlib.suppress(LeaseHeld):
                    await RoomLeases(pool, "usurper", ttl_s=30).acquire(room)
                    return
                await asyncio.sleep(0.1)
            raise AssertionError("the lease never lapsed")
        finally:
            await pool.close()

    asyncio.run(take())


async def test_a_steward_whose_lease_was_taken_says_nothing_more_in_the_room(
    livekit_server: LiveKitServer, database: Database, room_name: str
) -> None:
    settings = room_settings(
        livekit_server,
        database.url,
        steward_lease_seconds=1.0,
        steward_scripted_tokens_per_s=60,
    )
    service = await StewardService(settings, database=database, fairies=False).start(http=False)
    clients: list[HeadlessClient] = []
    try:
        runtime = await service.join(room_name)
        clients = await join_clients(livekit_server, room_name, ["alice"], runtime)
        sid = await prompt_until_accepted(clients[0], "draw a flow chart of signup with six steps")
        await wait_for(lambda: clients[0].applied_seq(sid) >= 2, timeout=30)
        alice = clients[0]
        heard = (list(alice.statuses[sid]), len(alice.chat))
        assert heard[0], "the steward said nothing while it held the room"
        # Frozen mid-session (the whole loop stops, as under SIGSTOP) while another steward
        # takes the room: its token is bumped in Postgres.
        with capture_logs() as logs:
            usurper = threading.Thread(target=_take_over, args=(database.url, room_name))
            usurper.start()
            usurper.join()
            # Closed, then gone from alice's room: it left after whatever it sent on waking.
            await wait_for(lambda: any(e["event"] == "room_closed" for e in logs), timeout=20)
            await wait_for(lambda: "canvas-steward" not in alice.room.remote_participants, 20)
        assert (list(alice.statuses[sid]), len(alice.chat)) == heard
        events = [e["event"] for e in logs]
        assert "publish_withheld" in events and "room_given_up" in events, events
        lease = await RoomLeases(database.pool, "-", ttl_s=1).get(room_name)
        assert lease is not None and lease.owner == "usurper"
    finally:
        await close_all(clients)
        await service.close()
