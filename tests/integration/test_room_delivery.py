"""Sequenced, acknowledged, exactly-once delivery to every browser (real LiveKit + Postgres)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from steward.canvas.mirror import CanvasMirror
from steward.protocol.messages import ActionEnvelope
from steward.service import StewardService
from steward.store.database import Database
from steward_tools.headless.client import Faults
from steward_tools.livekit_server import LiveKitServer
from tests.conftest import wait_for
from tests.support.fixed_script import FixedScriptRunner
from tests.support.room import (
    close_all,
    fixed_script_steward,
    join_clients,
    room_settings,
    settle,
)

pytestmark = pytest.mark.integration


@pytest.fixture
async def steward(
    livekit_server: LiveKitServer, database: Database
) -> AsyncIterator[StewardService]:
    async with fixed_script_steward(livekit_server, database, http=False) as service:
        yield service


async def test_three_clients_end_with_identical_canvases(
    steward: StewardService, livekit_server: LiveKitServer, room_name: str
) -> None:
    runtime = await steward.join(room_name)
    clients = await join_clients(livekit_server, room_name, ["alice", "bob", "carol"], runtime)
    try:
        reply = await clients[0].prompt("draw our signup flow")
        assert reply.error is None and reply.session_id
        sid = reply.session_id
        assert await clients[1].wait_status(sid) == "done"
        await settle(runtime, clients, sid)
        stream = runtime.broadcaster.stats(sid)
        for c in clients:
            assert c.shapes == clients[0].shapes
            assert c.stats.duplicates_applied == 0
            assert c.stats.out_of_order_applied == 0
            assert c.stats.actions_applied == 7  # 3 boxes, 2 arrows, a title, a move
        assert len(clients[0].shapes) == 6
        # The final status names the last seq (a browser asks for trailing envelopes it lacks).
        await wait_for(lambda: all(c.announced_last_seq(sid) == stream.last_seq for c in clients))
        assert runtime.mirror.shapes == clients[0].shapes
        assert clients[0].shapes[next(iter(clients[0].shapes))]["props"]["text"] == "Sign up"
        # Every envelope is in the outbox, and every client's acks were recorded.
        rows = await runtime.deps.outbox.session_after(room_name, sid, 0)
        assert [r.seq for r in rows] == list(range(1, stream.last_seq + 1))
        assert sorted(stream.acks) == ["alice", "bob", "carol"]
    finally:
        await close_all(clients)


async def test_injected_duplicates_reorders_drops_and_lost_acks(
    steward: StewardService, livekit_server: LiveKitServer, room_name: str
) -> None:
    runtime = await steward.join(room_name)
    faults = {
        "bob": Faults(drop_every=3, duplicate_every=4, reorder_every=5),
        "carol": Faults(drop_ack_every=2),
    }
    clients = await join_clients(
        livekit_server, room_name, ["alice", "bob", "carol"], runtime, faults=faults
    )
    try:
        reply = await clients[0].prompt("draw our signup flow")
        assert reply.session_id
        sid = reply.session_id
        assert await clients[0].wait_status(sid) == "done"
        await settle(runtime, clients, sid)
        alice, bob, carol = clients
        assert bob.stats.dropped > 0 and bob.stats.duplicates_received > 0
        assert carol.stats.acks_dropped > 0
        for c in clients:
            assert c.shapes == alice.shapes == runtime.mirror.shapes
            assert c.stats.duplicates_applied == 0
            assert c.stats.out_of_order_applied == 0
            assert c.stats.actions_applied == 7
        stream = runtime.broadcaster.stats(sid)
        # Drops and lost acks were repaired by retransmits to the laggards only.
        assert stream.retransmits > 0
        assert alice.stats.duplicates_received == 0  # alice never lagged: never re-sent to
    finally:
        await close_all(clients)


@pytest.mark.parametrize("held_by", ["acks", "pacing"])
async def test_a_busy_room_sends_fewer_previews_and_ends_identical_to_the_outbox(
    livekit_server: LiveKitServer, database: Database, room_name: str, held_by: str
) -> None:
    """A preview is superseded by the next: one still unacked (a slow client, pacing off)
    or numbered within the preview interval (prompt acks) is not sent."""
    interval_ms = 0 if held_by == "acks" else 200
    faults = {"bob": Faults(ack_delay_s=0.15)} if held_by == "acks" else None
    async with fixed_script_steward(
        livekit_server, database, http=False, steward_preview_interval_ms=interval_ms
    ) as steward:
        runtime = await steward.join(room_name)
        clients = await join_clients(
            livekit_server, room_name, ["alice", "bob"], runtime, faults=faults
        )
        try:
            reply = await clients[0].prompt("draw our signup flow")
            assert reply.session_id
            sid = reply.session_id
            assert await clients[0].wait_status(sid) == "done"
            await settle(runtime, clients, sid)
            stream = runtime.broadcaster.stats(sid)
            # The script streams 10 previews of 3 actions (10 ms apart) and 7 finals.
            if held_by == "acks":  # bob's slow acks held most previews
                assert stream.previews_coalesced >= 5 and stream.previews_paced == 0, stream
            else:  # each action's first preview goes; the next ones come too soon
                assert stream.previews_paced >= 5, stream
            rows = await runtime.deps.outbox.session_after(room_name, sid, 0)
            assert [r.seq for r in rows] == list(range(1, stream.last_seq + 1))
            envs = [ActionEnvelope.model_validate_json(r.payload) for r in rows]
            previews = sum(1 for env in envs if env.partial)
            assert 3 <= previews == 10 - stream.previews_coalesced
            replayed = CanvasMirror()
            for env in envs:
                replayed.apply(env.actions, partial=bool(env.partial), session=sid)
            for c in clients:
                assert c.stats.actions_applied == 7
                assert c.stats.partials_applied == previews
                assert c.stats.duplicates_applied == c.stats.out_of_order_applied == 0
                assert c.shapes == replayed.shapes == runtime.mirror.shapes
            assert clients[0].shapes[next(iter(clients[0].shapes))]["props"]["text"] == "Sign up"
        finally:
            await close_all(clients)


async def test_client_forced_to_reconnect_mid_stream_resyncs(
    livekit_server: LiveKitServer, database: Database, room_name: str
) -> None:
    service = StewardService(
        room_settings(livekit_server, database.url),
        database=database,
        runner=lambda: FixedScriptRunner(step_delay_s=0.12),
    )
    await service.start(http=False)
    runtime = await service.join(room_name)
    clients = await join_clients(livekit_server, room_name, ["alice", "bob", "carol"], runtime)
    try:
        alice, bob, _ = clients
        reply = await alice.prompt("draw our signup flow")
        assert reply.session_id
        sid = reply.session_id
        await wait_for(lambda: bob.applied_seq(sid) >= 2)
        await bob.simulate_full_reconnect()
        assert await alice.wait_status(sid) == "done"
        await settle(runtime, clients, sid)
        assert bob.reconnects >= 1
        for c in clients:
            assert c.shapes == alice.shapes == runtime.mirror.shapes
            assert c.stats.duplicates_applied == 0
            assert c.stats.out_of_order_applied == 0
            assert c.stats.actions_applied == 7
    finally:
        await close_all(clients)
        await service.close()


async def test_late_joiner_catches_up_and_user_edits_are_relayed(
    steward: StewardService, livekit_server: LiveKitServer, room_name: str
) -> None:
    runtime = await steward.join(room_name)
    clients = await join_clients(livekit_server, room_name, ["alice", "bob"], runtime)
    try:
        alice = clients[0]
        reply = await alice.prompt("draw our signup flow")
        assert reply.session_id
        assert await alice.wait_status(reply.session_id) == "done"
        await settle(runtime, clients, reply.session_id)
        # A user edit: alice recolours a box and adds a note; everyone converges.
        box = dict(next(iter(alice.shapes.values())))
        box["props"] = {**box["props"], "color": "red"}
        note = {
            "id": "note1",
            "type": "note",
            "x": 50,
            "y": 600,
            "rotation": 0,
            "props": {"text": "ship it", "color": "yellow"},
        }
        await alice.edit(put=[box, note])
        relay = runtime.relay.session_id
        await wait_for(lambda: all(c.shapes.get("note1") for c in clients))
        # Dave joins late: the room's history (agent session + relay) is replayed to him.
        (dave,) = await join_clients(livekit_server, room_name, ["dave"], runtime)
        clients.append(dave)
        await wait_for(lambda: dave.shapes == alice.shapes, timeout=15)
        await settle(runtime, clients, relay)
        for c in clients:
            assert c.shapes == runtime.mirror.shapes
            assert c.shapes[box["id"]]["props"]["color"] == "red"
            assert c.stats.duplicates_applied == 0 and c.stats.out_of_order_applied == 0
    finally:
        await close_all(clients)


async def test_the_canvas_agent_runs_end_to_end_on_three_clients(
    livekit_server: LiveKitServer, database: Database, room_name: str
) -> None:
    """The default runner (the agent core's canvas agent, scripted model) over the runtime."""
    service = StewardService(room_settings(livekit_server, database.url), database=database)
    await service.start(http=False)
    runtime = await service.join(room_name)
    clients = await join_clients(livekit_server, room_name, ["alice", "bob", "carol"], runtime)
    try:
        reply = await clients[2].prompt("draw a flow chart of our signup")
        assert reply.session_id
        assert await clients[0].wait_status(reply.session_id, timeout=60) == "done"
        await settle(runtime, clients, reply.session_id)
        assert len(clients[0].shapes) > 0
        for c in clients:
            assert c.shapes == clients[0].shapes == runtime.mirror.shapes
            assert c.stats.duplicates_applied == 0 and c.stats.out_of_order_applied == 0
    finally:
        await close_all(clients)
        await service.close()
