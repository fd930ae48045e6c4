"""Taking back a run (`steward.revert`) in a real room: real livekit-server and Postgres,
three headless clients applying and acking like browsers."""

from __future__ import annotations

import copy
import re
from collections.abc import AsyncIterator

import pytest
from structlog.testing import capture_logs

from steward.canvas.inverse import run_inverse
from steward.protocol.messages import ActionEnvelope
from steward.room.runs.revert import history_envelopes
from steward.room.runtime import RoomRuntime
from steward.service import StewardService
from steward.store.database import Database
from steward_tools.headless.client import HeadlessClient
from steward_tools.livekit_server import LiveKitServer
from tests.conftest import wait_for
from tests.support.room import (
    close_all,
    converged,
    drawn_run,
    join_clients,
    paced_steward,
    recording_steward,
    rectangle,
    room_settings,
    settle,
)

pytestmark = pytest.mark.integration


@pytest.fixture
async def steward(
    livekit_server: LiveKitServer, database: Database
) -> AsyncIterator[StewardService]:
    async with paced_steward(livekit_server, database, step_delay_s=0.2) as service:
        yield service


async def room_with_a_user_shape(
    steward: StewardService, server: LiveKitServer, room: str
) -> tuple[RoomRuntime, list[HeadlessClient]]:
    runtime = await steward.join(room)
    clients = await join_clients(server, room, ["ann", "bob", "cat"], runtime)
    await clients[0].edit([rectangle("mine", -400, -400, w=120, h=60, text="a user's note")])
    await wait_for(lambda: all("mine" in c.shapes for c in clients))
    return runtime, clients


async def test_a_run_reverted_in_three_clients_leaves_them_identical_and_as_before(
    steward: StewardService, livekit_server: LiveKitServer, room_name: str
) -> None:
    runtime, clients = await room_with_a_user_shape(steward, livekit_server, room_name)
    ann, bob, _cat = clients
    try:
        before = await converged(runtime, clients)
        run = await drawn_run(ann, runtime, clients)
        after_run = await converged(runtime, clients)
        assert len(after_run) == len(before) + 6  # three boxes, two arrows, a title
        with capture_logs() as logs:
            reply = await ann.revert(run)
        assert reply.error is None and reply.session_id and reply.left == []
        assert await bob.wait_status(reply.session_id) == "done"
        await settle(runtime, clients, reply.session_id)
        assert await converged(runtime, clients) == before
        assert all(list(c.shapes) == list(before) for c in clients)  # z-order too
        (line,) = [e for e in logs if e["event"] == "session_reverted"]
        assert (line["by"], line["removed"], line["left"]) == ("ann", 6, 0)
        said = [m.text for m in bob.chat if m.session_id == reply.session_id]
        # The undo button names no run: the reply and the revert's prompt line name it by the
        # words that asked for it, as the panel shows them, never by its id.
        assert said == ['Took back "draw our signup flow": 6 shape changes.']
        (notice,) = [
            i.payload["text"]
            for i in runtime.conversation.items()
            if i.kind == "prompt" and i.session_id == reply.session_id
        ]
        assert notice == 'Undo "draw our signup flow"'
        assert run not in notice
    finally:
        await close_all(clients)


async def test_a_shape_a_user_moved_after_the_run_stays_and_is_named(
    steward: StewardService, livekit_server: LiveKitServer, room_name: str
) -> None:
    runtime, clients = await room_with_a_user_shape(steward, livekit_server, room_name)
    ann, bob, cat = clients
    try:
        run = await drawn_run(ann, runtime, clients)
        box = next(sid for sid in runtime.mirror.shapes if sid.endswith("-box1"))
        moved = copy.deepcopy(runtime.mirror.shapes[box])
        moved.update(x=1500.0, y=1500.0)
        await bob.edit([moved])
        await wait_for(lambda: all(c.shapes[box]["x"] == 1500.0 for c in clients))
        reply = await ann.revert(run)
        assert reply.session_id and reply.left == [box]
        assert await cat.wait_status(reply.session_id) == "done"
        await settle(runtime, clients, reply.session_id)
        now = await converged(runtime, clients)
        assert (now[box]["x"], now[box]["y"]) == (1500.0, 1500.0)  # where the user put it
        assert set(now) == {"mine", box}  # the rest of the run is gone
        (said,) = [m.text for m in cat.chat if m.session_id == reply.session_id]
        assert box in said and "Verify email" in said and "changed since the run" in said
    finally:
        await close_all(clients)


async def test_a_revert_of_a_revert_redoes_the_run(
    steward: StewardService, livekit_server: LiveKitServer, room_name: str
) -> None:
    runtime, clients = await room_with_a_user_shape(steward, livekit_server, room_name)
    ann, bob, _cat = clients
    try:
        before = await converged(runtime, clients)
        run = await drawn_run(ann, runtime, clients)
        after_run = await converged(runtime, clients)
        undo = await ann.revert(run)
        assert undo.session_id
        await bob.wait_status(undo.session_id)
        assert await converged(runtime, clients) == before
        # Bob asked for neither, but the revert's run is Ann's: she redoes it.
        redo = await ann.revert(undo.session_id)
        assert redo.session_id and redo.left == []
        assert await bob.wait_status(redo.session_id) == "done"
        await settle(runtime, clients, redo.session_id)
        assert await converged(runtime, clients) == after_run
        assert all(list(c.shapes) == list(after_run) for c in clients)
        # Both are runs of the room's one registry, ended there, Ann's.
        for sid in (undo.session_id, redo.session_id):
            assert re.fullmatch(r"s-[0-9a-f]{16}", sid)
            assert runtime.sessions.kinds[sid] == "revert"
            assert runtime.sessions.results[sid].outcome == "done"
            assert runtime.sessions.owner(sid) == ann.identity
    finally:
        await close_all(clients)


async def test_a_revert_of_a_running_run_cancels_it_first(
    steward: StewardService, livekit_server: LiveKitServer, room_name: str
) -> None:
    runtime, clients = await room_with_a_user_shape(steward, livekit_server, room_name)
    ann, bob, _cat = clients
    try:
        before = await converged(runtime, clients)
        reply = await ann.prompt("draw our signup flow")
        run = reply.session_id
        assert run
        # The first box is drawn (its text streamed in, then final), the second is streaming.
        await wait_for(lambda: runtime.broadcaster.stats(run).last_seq >= 6)
        assert run in runtime.sessions.running()
        undo = await ann.revert(run)
        assert undo.error is None and undo.session_id
        assert await bob.wait_status(run) == "canceled"
        assert await bob.wait_status(undo.session_id) == "done"
        await settle(runtime, clients, undo.session_id)
        assert await converged(runtime, clients) == before
        assert runtime.mirror.in_flight() == []
    finally:
        await close_all(clients)


async def test_a_revert_by_someone_who_may_not_cancel_is_refused(
    steward: StewardService, livekit_server: LiveKitServer, room_name: str
) -> None:
    runtime, clients = await room_with_a_user_shape(steward, livekit_server, room_name)
    ann, bob, cat = clients
    (eve,) = await join_clients(livekit_server, room_name, ["eve"], runtime, can_prompt=False)
    (mod,) = await join_clients(livekit_server, room_name, ["mod"], runtime, moderator=True)
    everyone = [*clients, eve, mod]
    try:
        run = await drawn_run(ann, runtime, everyone)
        after_run = await converged(runtime, everyone)
        with capture_logs() as logs:
            by_bob = await bob.revert(run)
            by_eve = await eve.revert(run)
            unknown = await ann.revert("s-0000000000000000")
        assert by_bob.session_id is None and by_bob.error
        assert "moderator" in by_bob.error
        assert by_eve.session_id is None and by_eve.error == "not allowed to revert"
        assert unknown.error == "no run with that id in this room"
        refusals = [e for e in logs if e["event"] == "session_revert_refused"]
        assert [(e["by"], e.get("owner")) for e in refusals[:1]] == [("bob", "ann")]
        assert {e["by"] for e in refusals} == {"bob", "ann"}
        # A revert sends its actions (through the room's mirror) before its RPC is answered:
        # had one run, the mirror the clients converge to would already differ.
        assert await converged(runtime, everyone) == after_run  # nothing was sent
        by_mod = await mod.revert(run)
        assert by_mod.session_id and await cat.wait_status(by_mod.session_id) == "done"
        await settle(runtime, everyone, by_mod.session_id)
        assert set(await converged(runtime, everyone)) == {"mine"}
    finally:
        await close_all(everyone)


async def test_a_run_is_reverted_by_a_steward_started_after_it(
    livekit_server: LiveKitServer, database: Database, room_name: str
) -> None:
    first, _ = await recording_steward(livekit_server, database)
    clients: list[HeadlessClient] = []
    try:
        runtime = await first.join(room_name)
        clients = await join_clients(livekit_server, room_name, ["ann", "bob"], runtime)
        ann, bob = clients
        await ann.edit([rectangle("mine", -400, -400, w=120, h=60, text="a user's note")])
        await wait_for(lambda: all("mine" in c.shapes for c in clients))
        before = await converged(runtime, clients)
        run = await drawn_run(ann, runtime, clients)
    finally:
        await first.close()
    second, _ = await recording_steward(livekit_server, database)
    try:
        runtime = await second.join(room_name)
        await wait_for(lambda: all(runtime.participants.get(c.identity) for c in clients))
        assert runtime.sessions.sessions == {}  # the run is known from Postgres only
        reply = await ann.revert(run)
        assert reply.session_id and reply.left == []
        assert await bob.wait_status(reply.session_id) == "done"
        await settle(runtime, clients, reply.session_id)
        assert await converged(runtime, clients) == before
    finally:
        await close_all(clients)
        await second.close()


async def test_a_drones_run_of_a_fairy_project_is_reverted_alone(
    livekit_server: LiveKitServer, database: Database, room_name: str
) -> None:
    settings = room_settings(
        livekit_server, database.url, steward_model="scripted", steward_scripted_tokens_per_s=4000
    )
    service = StewardService(settings, database=database)
    await service.start(http=False)
    clients: list[HeadlessClient] = []
    try:
        runtime = await service.join(room_name)
        clients = await join_clients(livekit_server, room_name, ["ann", "bob"], runtime)
        ann, bob = clients
        reply = await ann.prompt("project: draw a farm")
        assert reply.session_id
        assert await bob.wait_status(reply.session_id, timeout=60) == "done"
        done = await converged(runtime, clients)
        rows = await runtime.deps.outbox.room_history(room_name)
        drones = sorted(
            {
                env.session_id
                for row in rows
                if (env := ActionEnvelope.model_validate_json(row.payload)).session_id
                != reply.session_id
            }
        )
        assert len(drones) == 2, drones
        # The drones worked for Ann (her prompt started the project), not for Bob.
        refused = await bob.revert(drones[1])
        assert refused.session_id is None and refused.error and "moderator" in refused.error
        undo = await ann.revert(drones[0])
        assert undo.error is None and undo.session_id and undo.left == []
        assert await bob.wait_status(undo.session_id) == "done"
        await settle(runtime, clients, undo.session_id)
        now = await converged(runtime, clients)
        ours = run_inverse(history_envelopes(rows), drones[0], current=done)
        assert ours.removed and set(now) == set(done) - set(ours.removed)
        assert all(now[sid] == done[sid] for sid in now)  # the other drone's work stays
    finally:
        await close_all(clients)
        await service.close()
