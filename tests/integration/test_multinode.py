"""Two livekit-server nodes on one Redis (LiveKit's multi-node mode), run for real.

Real Redis, 2 real livekit-server nodes, real Postgres, one `steward worker` registered with
each node, the `anthropic:` provider against the local Messages server. Every room has one
client on each node, so its two clients only meet if the nodes share the room through Redis.
Rooms are placed on both nodes and dispatched through either node's API; every room is served
(prompt -> done in both clients). Then the worker holding the most rooms is SIGKILLed: the
other node's worker gets its rooms back through the re-dispatch watcher, serves prompts in
them, LiveKit lists one dispatch per moved room (the dead worker's is deleted), and every
canvas equals its room's outbox. What LiveKit did is printed
(docs/DEPLOY.md, "Several livekit-server nodes").
"""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from collections import Counter
from functools import partial
from pathlib import Path

import pytest

from steward.room.workers.livekit_admin import LiveKitAdmin
from steward_tools.bench.failover import (
    FAIRY_MODEL,
    Room,
    Workers,
    lease_owners,
    our_dispatches,
    unfenced,
)
from steward_tools.bench.faults import converged, prompt_retrying
from steward_tools.livekit_cluster import LiveKitCluster
from steward_tools.rigs.anthropic_server import MessagesServer
from steward_tools.rigs.clients import TimedClient
from steward_tools.rigs.responders import PlanResponder
from steward_tools.waiting import wait_until

pytestmark = pytest.mark.integration

ROOMS = 4
LEASE_S = 2.0


def _met(room: Room) -> bool:
    ann, bob = room.clients
    return "bob" in ann.room.remote_participants and "ann" in bob.room.remote_participants


async def _prompt_done(room: Room, by: TimedClient, message: str) -> None:
    reply = await prompt_retrying(by, message)
    assert reply.session_id, f"{room.name}: prompt refused: {reply.error}"
    for c in room.clients:
        assert await c.wait_status(reply.session_id, 60) == "done", (room.name, c.identity)


async def test_two_nodes_on_one_redis_serve_rooms_and_fail_over_across_nodes(
    fresh_db_url: str, tmp_path: Path
) -> None:
    cluster = await LiveKitCluster(size=2).astart()
    a, b = cluster.nodes
    model = MessagesServer(responder=PlanResponder(seed=13))
    await model.start()
    agent = f"multinode-{uuid.uuid4().hex[:6]}"
    admins = [LiveKitAdmin(n.url, n.api_key, n.api_secret, agent_name=agent) for n in (a, b)]
    workers = Workers(
        {
            **os.environ,
            "LIVEKIT_API_KEY": a.api_key,
            "LIVEKIT_API_SECRET": a.api_secret,
            "DATABASE_URL": fresh_db_url,
            "STEWARD_AGENT_NAME": agent,
            "STEWARD_LOG_FORMAT": "json",
            "STEWARD_LEASE_SECONDS": str(LEASE_S),
            "STEWARD_MODEL": FAIRY_MODEL,
            "ANTHROPIC_BASE_URL": model.base_url,
            "ANTHROPIC_API_KEY": "local-test-model",
            "STEWARD_WORKER_MAX_ROOMS": str(ROOMS),
        },
        tmp_path,
    )
    rooms: list[Room] = []
    try:
        workers.spawn(2, urls=[a.url, b.url])  # worker i registers with node i
        for i in range(ROOMS):
            name = f"multi-{uuid.uuid4().hex[:6]}-{i}"
            # ann signals through one node, bob through the other.
            clients = [
                TimedClient.create(n.url, n.api_key, n.api_secret, room=name, identity=who)
                for n, who in ((cluster.nodes[i % 2], "ann"), (cluster.nodes[1 - i % 2], "bob"))
            ]
            room = Room(name, [c for c in clients if isinstance(c, TimedClient)])
            rooms.append(room)
            for c in room.clients:
                room.watch(c)
                await c.connect()
            await asyncio.to_thread(cluster.wait_placed, name)  # the next room: the other node
        for r in rooms:  # one room, whichever node each client came through
            await wait_until(partial(_met, r), 20, f"{r.name}: ann and bob meet")
        hosts = cluster.room_nodes()
        assert {hosts.get(r.name) for r in rooms} == {0, 1}, hosts  # rooms on both nodes
        await wait_until(workers.registered, 180, "both workers registered")
        for i, r in enumerate(rooms):
            # Through either node's API, one at a time (an idle worker is full while its
            # first job starts, and LiveKit does not retry a dispatch it found no worker for).
            await admins[i % 2].dispatch(r.name, reason="test")
            await wait_until(r.served, 60, f"{r.name} served")
        pids = {p.pid: i for i, p in enumerate(workers.procs)}
        owners = {room: pids[pid] for room, pid in (await lease_owners(fresh_db_url)).items()}
        assert set(owners) == {r.name for r in rooms}, owners
        for r in rooms:
            await _prompt_done(r, r.clients[0], "draw a flow chart of our signup")

        victim, _ = Counter(owners.values()).most_common(1)[0]
        survivor = 1 - victim
        of_killed = [r for r in rooms if owners[r.name] == victim]
        old_sid = {r.name: r.steward(r.clients[0]).sid for r in of_killed}  # type: ignore[union-attr]
        workers.kill(workers.procs[victim].pid)
        killed_at = time.monotonic()
        recovered: dict[str, float] = {}
        for r in of_killed:
            await wait_until(partial(r.served, old_sid[r.name]), 45, f"{r.name} served again")
            recovered[r.name] = round(time.monotonic() - killed_at, 2)
        after = {
            room: pids.get(pid, -1) for room, pid in (await lease_owners(fresh_db_url)).items()
        }
        assert all(after.get(r.name) == survivor for r in of_killed), after
        for r in of_killed:
            await _prompt_done(r, r.clients[1], "draw our team as boxes")
        for r in rooms:
            assert await converged(r.clients, fresh_db_url, r.name, 30), r.name
            for c in r.clients:
                assert c.stats.duplicates_applied == c.stats.out_of_order_applied == 0, c.stats
        assert all(r.received for r in rooms), "the clients' envelopes were not recorded"
        assert await unfenced(fresh_db_url, rooms) == [0] * len(rooms)
        # The dead worker's dispatches are deleted (through the survivor's node).
        moved = [r.name for r in of_killed]
        assert await our_dispatches(admins[0], moved) == [1] * len(moved)
        # What LiveKit did: the room's node, the nodes of its clients and of its workers.
        for i, r in enumerate(rooms):
            print(
                f"{r.name}: hosted on node {hosts[r.name]}, ann via node {i % 2}, bob via node"
                f" {1 - i % 2}, dispatched via node {i % 2}, job on worker@node {owners[r.name]}"
                + (
                    f", after kill on worker@node {after[r.name]} in {recovered[r.name]}s"
                    if r.name in recovered
                    else ""
                )
            )
    finally:
        for r in rooms:
            for c in r.clients:
                await c.disconnect()
        for d in admins:
            await d.aclose()
        await workers.stop()
        await model.stop()
        cluster.stop()
