"""Queued HTTP runs in a real Postgres: taken once, oldest first, only under the room's live
lease; a run nobody takes expires with a state its caller can read."""

from __future__ import annotations

import asyncio

import pytest

from steward.protocol.box import Box
from steward.store.database import Database
from steward.store.leases import RoomLeases
from steward.store.outbox import Outbox
from steward.store.queued_runs import QueuedRun, QueuedRuns, RunBell
from tests.support.clock import expire_queued, lapse_leases

pytestmark = pytest.mark.integration

# Leases and runs long enough that a loaded machine never lets one lapse between two
# statements; a lapse or an expiry is made by moving the row's times (tests/support/clock).
TTL = 30.0


def run(n: int, room: str) -> QueuedRun:
    view = Box(x=0, y=0, w=100 + n, h=50) if n == 1 else None
    picked = ("fairy-3", "fairy-1") if n == 1 else ()
    return QueuedRun(f"s-q{n}", room, f"prompt {n}", None, view, asker="http", fairies=picked)


async def test_runs_are_taken_once_in_order_only_by_the_live_lease(
    database: Database, room_name: str
) -> None:
    runs = QueuedRuns(database.pool)
    for n in range(1, 4):
        await runs.put(run(n, room_name), ttl_s=60)
    stale = await RoomLeases(database.pool, "stale", ttl_s=TTL).acquire(room_name)
    await lapse_leases(database.pool, [room_name], TTL + 1)  # it froze past its lease
    live = await RoomLeases(database.pool, "live", ttl_s=30).acquire(room_name)
    assert live.token == stale.token + 1
    # Both keep trying at once: the live holder gets each run once, the stale one none.
    takes = [runs.take(room_name, owner="stale", token=stale.token) for _ in range(4)]
    takes += [runs.take(room_name, owner="live", token=live.token) for _ in range(4)]
    got = [r for r in await asyncio.gather(*takes) if r is not None]
    assert sorted(r.session_id for r in got) == ["s-q1", "s-q2", "s-q3"]
    rows = await database.pool.fetch("SELECT taken_by, taken_token FROM queued_runs")
    assert {(r["taken_by"], r["taken_token"]) for r in rows} == {("live", live.token)}
    # One steward takes a room's runs one after another: oldest first.
    for n in (5, 4, 6):
        await runs.put(run(n, room_name), ttl_s=60)
    taken = [await runs.take(room_name, owner="live", token=live.token) for _ in range(3)]
    assert [r.session_id for r in taken if r is not None] == ["s-q5", "s-q4", "s-q6"]
    first = next(r for r in got if r.session_id == "s-q1")
    assert first.viewport == Box(x=0, y=0, w=101, h=50) and first.prompt == "prompt 1"
    assert first.fairies == ("fairy-3", "fairy-1")  # the fairies it is for, in order
    assert all(r.fairies == () for r in got if r is not first)
    assert await runs.take(room_name, owner="live", token=live.token) is None
    state = await runs.state("s-q1")
    assert state is not None and state.state == "taken"  # no session started for it here


async def test_a_run_nobody_takes_expires(database: Database, room_name: str) -> None:
    runs = QueuedRuns(database.pool)
    await runs.put(run(7, room_name), ttl_s=TTL)
    state = await runs.state("s-q7")
    assert state is not None and state.state == "queued"
    assert await runs.waiting(room_name)
    await expire_queued(database.pool, ["s-q7"])
    lease = await RoomLeases(database.pool, "late", ttl_s=30).acquire(room_name)
    assert await runs.take(room_name, owner="late", token=lease.token) is None
    assert not await runs.waiting(room_name)
    state = await runs.state("s-q7")
    assert state is not None and state.state == "expired"
    assert await runs.expire() == 1
    assert (await database.pool.fetchval("SELECT state FROM queued_runs")) == "expired"
    assert await runs.state("s-none") is None


async def test_a_run_whose_taker_died_before_starting_it_is_taken_again_once(
    database: Database, room_name: str
) -> None:
    runs, outbox = QueuedRuns(database.pool), Outbox(database.pool)
    await outbox.ensure_room(room_name, "relay")
    await runs.put(run(8, room_name), ttl_s=60)
    dead = await RoomLeases(database.pool, "dead", ttl_s=TTL).acquire(room_name)
    assert await runs.take(room_name, owner="dead", token=dead.token) is not None
    assert await state_of(runs, "s-q8") == "taken"  # its taker still holds the room
    assert not await runs.waiting(room_name)
    # The taker died before starting it: its lease lapsed.
    await lapse_leases(database.pool, [room_name], TTL + 1)
    assert await state_of(runs, "s-q8") == "queued"
    assert await runs.waiting(room_name)
    # Only a new holder takes it (the dead token no longer holds the room), and only once.
    assert await runs.take(room_name, owner="dead", token=dead.token) is None
    live = await RoomLeases(database.pool, "live", ttl_s=30).acquire(room_name)
    again = [runs.take(room_name, owner="live", token=live.token) for _ in range(3)]
    got = [r for r in await asyncio.gather(*again) if r is not None]
    assert [r.session_id for r in got] == ["s-q8"] and got[0].prompt == "prompt 8"
    assert await state_of(runs, "s-q8") == "taken"
    # A run whose session started is the session's: a lost lease does not hand it out again.
    await outbox.start_session(
        session_id="s-q8", room_id=room_name, source="http", requester="http", model="m"
    )
    await RoomLeases(database.pool, "live", ttl_s=30).release(live)
    after = await RoomLeases(database.pool, "after", ttl_s=30).acquire(room_name)
    assert await runs.take(room_name, owner="after", token=after.token) is None
    assert await state_of(runs, "s-q8") == "running"


async def test_old_finished_and_expired_runs_are_pruned_in_bounded_batches(
    database: Database, room_name: str
) -> None:
    runs, outbox = QueuedRuns(database.pool), Outbox(database.pool)
    await outbox.ensure_room(room_name, "relay")
    for n in (11, 12, 13, 14, 15):
        await runs.put(run(n, room_name), ttl_s=600)
    for sid, status in (("s-q12", "done"), ("s-q13", "running")):
        await outbox.start_session(
            session_id=sid, room_id=room_name, source="http", requester="http", model="m"
        )
        if status == "done":
            await outbox.end_session(sid, "done", "done")
    await expire_queued(database.pool, ["s-q11", "s-q12", "s-q13", "s-q15"])
    # Queued two minutes ago, except s-q15 (expired, but younger than the retention).
    await database.pool.execute(
        "UPDATE queued_runs SET created_at = now() - interval '120 seconds'"
        " WHERE session_id <> 's-q15'"
    )
    assert await runs.prune(retention_s=60, limit=1) == 1
    assert await runs.prune(retention_s=60) == 1
    assert await runs.prune(retention_s=60) == 0
    left = await database.pool.fetch("SELECT session_id FROM queued_runs ORDER BY session_id")
    # s-q11 expired and s-q12 done: gone; running, still waiting and young ones stay.
    assert [r["session_id"] for r in left] == ["s-q13", "s-q14", "s-q15"]


async def state_of(runs: QueuedRuns, session_id: str) -> str:
    found = await runs.state(session_id)
    assert found is not None
    return found.state


async def test_one_beat_of_the_bell_wakes_only_the_rooms_with_a_run_waiting(
    database: Database, room_name: str
) -> None:
    runs = QueuedRuns(database.pool)
    bell = RunBell(runs, period_s=60)
    waiting, idle, gone = (f"{room_name}-{k}" for k in ("a", "b", "c"))
    bells = {room: bell.register(room) for room in (waiting, idle, gone)}
    bell.unregister(gone)
    await runs.put(run(18, waiting), ttl_s=60)
    await runs.put(run(19, gone), ttl_s=60)
    await bell.ring()
    assert [room for room, b in bells.items() if b.is_set()] == [waiting]
