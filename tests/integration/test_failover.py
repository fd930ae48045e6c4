"""Failover over the real stack: rooms whose worker died are dispatched again.

- the re-dispatch watcher of two workers over one lapsed lease: one dispatch in LiveKit, not
  two; a lapsed room nobody is in is released, not dispatched, unless an HTTP run waits there;
- `steward bench failover` at CI size: 3 `steward worker` processes, 6 rooms with 2 clients
  each running a one-shot prompt and a fairy project (the fairies on the `anthropic:`
  provider against the local test model); one worker SIGKILLed mid-run with a 30 s lease:
  its rooms are taken before the lease expires (its liveness lock is gone), and LiveKit
  lists one dispatch per room after (the dead worker's is deleted). The bench's own
  run is 3 workers x 12 rooms (docs/PERFORMANCE.md).
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest

from steward.room.workers.failover import FailoverWatcher
from steward.room.workers.livekit_admin import LiveKitAdmin
from steward.store.database import Database
from steward.store.leases import RoomLeases
from steward.store.queued_runs import QueuedRun, QueuedRuns
from steward_tools.bench import failover
from steward_tools.headless.client import HeadlessClient
from steward_tools.livekit_server import LiveKitServer
from tests.support.clock import lapse_leases

pytestmark = pytest.mark.integration

# Long enough that a loaded machine never lets a lease lapse between two statements; a
# lapse is made by moving the lease's times (tests/support/clock), not by sleeping.
TTL = 30.0


async def test_two_watchers_dispatch_a_lapsed_or_drained_room_once_and_release_an_empty_one(
    livekit_server: LiveKitServer, database: Database
) -> None:
    agent = f"agent-{uuid.uuid4().hex[:6]}"
    busy, empty = f"busy-{uuid.uuid4().hex[:6]}", f"empty-{uuid.uuid4().hex[:6]}"
    drained, waiting = f"drained-{uuid.uuid4().hex[:6]}", f"waiting-{uuid.uuid4().hex[:6]}"
    key, secret = livekit_server.api_key, livekit_server.api_secret
    clients = [
        HeadlessClient.create(livekit_server.url, key, secret, room=room, identity="ann")
        for room in (busy, drained)
    ]
    dead = RoomLeases(database.pool, "dead-worker", ttl_s=TTL)
    watchers = [
        FailoverWatcher(
            RoomLeases(database.pool, f"w{i}", ttl_s=TTL),
            LiveKitAdmin(livekit_server.url, key, secret, agent_name=agent),
            steward_identity="canvas-steward",
            runs=QueuedRuns(database.pool),
        )
        for i in range(2)
    ]
    try:
        for c in clients:
            await c.connect()
        for room in (busy, empty, waiting):
            await dead.acquire(room)
        # Nobody is in `waiting`, but an HTTP run waits for its steward there.
        run = QueuedRun(f"s-{waiting}", waiting, "draw a box", None, None, asker="http")
        await QueuedRuns(database.pool).put(run, ttl_s=60)
        assert await watchers[0].sweep() == []  # live leases: nothing to do
        # A draining worker released its room; the other holder died: its leases lapse.
        await dead.release(await RoomLeases(database.pool, "drainer", ttl_s=30).acquire(drained))
        await lapse_leases(database.pool, [busy, empty, waiting], TTL + 1)
        assert set(await dead.unattended(60)) == {busy, empty, drained, waiting}
        swept = await asyncio.gather(*(w.sweep() for w in watchers))
        # One dispatch per room with people or a run waiting, not one per watcher.
        assert sorted(r for rooms in swept for r in rooms) == sorted([busy, drained, waiting])
        for room in (busy, drained, waiting):
            listed = await watchers[0].admin.dispatches(room)
            assert [d.agent_name for d in listed if d.agent_name == agent] == [agent]
        # Both lapses are handled: neither is looked at again before the claim runs out.
        assert await dead.unattended(60) == []
        row = await dead.get(empty)
        assert row is not None and row.expired
        # The empty room's lease counts as released.
        assert set(await dead.expired()) == {busy, waiting}
        # A worker taking the room clears the claim: its own lapse later is watched again.
        taken = await RoomLeases(database.pool, "next", ttl_s=TTL).acquire(busy)
        assert taken.token == 2
        await lapse_leases(database.pool, [busy], TTL + 1)
        assert await dead.unattended(60) == [busy]
    finally:
        for c in clients:
            await c.disconnect()
        for w in watchers:
            await w.close()


async def test_a_killed_workers_rooms_are_served_again_with_nothing_lost(tmp_path: Path) -> None:
    # A long lease: the rooms move on the dead worker's liveness lock, long before it expires.
    result = await failover.run(workers=3, rooms=6, lease_s=30, log_dir=tmp_path)
    print(result)  # and worker-N.log in tmp_path
    assert result["rooms_of_killed"] >= 1, result
    assert result["rooms_recovered"] == result["rooms_of_killed"], result
    assert result["taken_before_expiry"] == result["rooms_of_killed"], result
    assert result["served_again"] == result["rooms_of_killed"], result
    assert result["takeovers"] == result["rooms_of_killed"], result  # no room moved twice
    assert (result["lost"], result["duplicated"], result["out_of_order"]) == (0, 0, 0), result
    assert result["stale_publishes"] == 0, result
    # The dead worker's dispatch is deleted once the room is served again: one stays listed.
    assert result["dispatches_per_room"] == [1] * result["rooms_of_killed"], result
    assert result["canvases_identical"] is True, result
    assert result["projects_done"] == 6, result
    # The hidden observer in its own process saw every moved room's new steward ready.
    assert result["phases_s"]["observer_saw_ready"]["n"] == result["rooms_of_killed"], result
