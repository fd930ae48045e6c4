"""A whole fairy `project:` through the real `anthropic:` provider, over a real room.

The model is the local Messages-streaming server with `PlanResponder`, which answers each
request only from what it says (the advertised response schema, the shapes, the bounds, the
tasks and fairies listed), streamed in random chunkings. The orchestrator plans tasks with
the actions its schema offers, the drones draw inside the areas their prompts give them, the
orchestrator, woken by the finished tasks, reviews them and ends the project.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from steward.canvas.bounds import shape_bounds
from steward.fairies.modes import MODES
from steward.service import StewardService
from steward.store.database import Database
from steward.turns.bounds_guard import belongs
from steward.turns.turn import NO_ACTION_NOTICE
from steward_tools.livekit_server import LiveKitServer
from steward_tools.rigs.anthropic_server import MessagesServer
from steward_tools.rigs.responders import PlanResponder
from tests.conftest import wait_for
from tests.support.room import close_all, join_clients, room_settings

pytestmark = pytest.mark.integration


@pytest.fixture
async def model() -> AsyncIterator[tuple[MessagesServer, PlanResponder]]:
    responder = PlanResponder(seed=7)
    server = MessagesServer(responder=responder)
    await server.start()
    yield server, responder
    await server.stop()


async def test_a_project_run_by_a_model_that_reads_only_its_requests(
    livekit_server: LiveKitServer,
    database: Database,
    room_name: str,
    model: tuple[MessagesServer, PlanResponder],
) -> None:
    server, responder = model
    settings = room_settings(
        livekit_server,
        database.url,
        steward_model="anthropic:claude-fairy-test",
        anthropic_base_url=server.base_url,
        steward_context_timeout_s=2.0,
    )
    service = StewardService(settings, database=database)
    await service.start(http=False)
    runtime = await service.join(room_name)
    clients = await join_clients(livekit_server, room_name, ["alice", "bob", "carol"], runtime)
    try:
        reply = await clients[0].prompt("project: draw our team as boxes side by side")
        assert reply.error is None and reply.session_id
        assert await clients[1].wait_status(reply.session_id, timeout=60) == "done"
        await wait_for(
            lambda: (
                runtime.broadcaster.total_unacked() == 0
                and all(c.shapes == runtime.mirror.shapes for c in clients)
            ),
            timeout=20,
        )
        assert service.fairies is not None
        room = service.fairies.rooms[room_name]
        (project,) = room.board.projects.values()
        assert project.status == "done"
        tasks = room.board.project_tasks(project.id)
        assert len(tasks) == 2 and all(t.status == "done" for t in tasks)

        # Each drone drew its one box inside its own area; nothing twice; canvases identical.
        shapes = runtime.mirror.shapes
        assert sorted(shapes) == sorted(f"box-{t.id}" for t in tasks)
        for t in tasks:
            assert t.bounds is not None
            assert belongs(shape_bounds(shapes[f"box-{t.id}"], shapes), t.bounds), t.id
        assert clients[0].shapes == clients[1].shapes == clients[2].shapes == shapes

        # Every request of every role carried its schema, made of exactly its mode's
        # actions, and the screenshot wherever the mode may see.
        answered = responder.answered
        modes = [a.view.mode for a in answered]
        assert "orchestrating-active" in modes and modes.count("working-drone") >= 2
        for a in answered:
            assert a.view.schema is not None and a.view.mode in MODES, a.view.mode
            m = MODES[a.view.mode]  # type: ignore[index]
            assert set(a.view.action_names) == set(m.actions), a.view.mode
            assert a.view.has_screenshot == ("screenshot" in m.parts), a.view.mode
        drones = [a for a in answered if a.view.mode == "working-drone"]
        assert all(a.view.bounds is not None for a in drones)
        # The orchestrator was woken, saw every task done, and ended the project.
        last = [a for a in answered if a.view.mode == "orchestrating-active"][-1]
        assert last.view.tasks and all(t.status == "done" for t in last.view.tasks)
        assert any(act["_type"] == "end-project" for act in last.actions)
        # Every response yielded actions: no "nothing changed" notice, no refusal fed back.
        said = [(m.text, bool(m.partial)) for m in clients[0].chat]
        finals = [text for text, partial in said if not partial]
        assert not any(NO_ACTION_NOTICE in t for t in finals), finals
        assert not any("Feedback:" in a.view.user for a in answered)
        # Every message ended final, and the drones' replies are in their history.
        assert finals[-1].endswith("finished.")
        assert all(finals.count(f"Drew the box for {t.id}.") == 1 for t in tasks), finals
        for t in tasks:
            assert t.assigned_to is not None
            mine = [i.model_text() for i in room.history_of(t.assigned_to)]
            assert any(f"Drew the box for {t.id}." in text for text in mine), t.assigned_to
    finally:
        await close_all(clients)
        await service.close()
