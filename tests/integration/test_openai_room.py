"""A fairy project over a real room whose drones run on an `openai:` model.

The orchestrator's model is `anthropic:` (the local Messages server), the drones' is `openai:`
(the local Chat Completions server); one `PlanResponder` answers both protocols from what each
request says. The drones' boxes reach every headless client through livekit-server, and the
runs are recorded in Postgres.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from steward.canvas.bounds import shape_bounds
from steward.service import StewardService
from steward.store.database import Database
from steward.turns.bounds_guard import belongs
from steward_tools.livekit_server import LiveKitServer
from steward_tools.rigs.anthropic_server import MessagesServer
from steward_tools.rigs.openai_server import ChatCompletionsServer
from steward_tools.rigs.responders import PlanResponder
from tests.conftest import wait_for
from tests.support.room import close_all, join_clients, room_settings

pytestmark = pytest.mark.integration


@pytest.fixture
async def servers() -> AsyncIterator[tuple[MessagesServer, ChatCompletionsServer, PlanResponder]]:
    responder = PlanResponder(seed=11)
    messages = MessagesServer(responder=responder)
    chat = ChatCompletionsServer(responder=responder)
    await messages.start()
    await chat.start()
    yield messages, chat, responder
    await chat.stop()
    await messages.stop()


async def test_drones_on_an_openai_model_draw_for_every_client(
    livekit_server: LiveKitServer,
    database: Database,
    room_name: str,
    servers: tuple[MessagesServer, ChatCompletionsServer, PlanResponder],
) -> None:
    messages, chat, responder = servers
    settings = room_settings(
        livekit_server,
        database.url,
        steward_model="anthropic:claude-lead-test",
        steward_model_drone="openai:qwen-drone-test",
        anthropic_base_url=messages.base_url,
        openai_base_url=chat.base_url,
        steward_context_timeout_s=2.0,
    )
    service = StewardService(settings, database=database)
    await service.start(http=False)
    runtime = await service.join(room_name)
    clients = await join_clients(livekit_server, room_name, ["alice", "bob"], runtime)
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
        (project,) = service.fairies.rooms[room_name].board.projects.values()
        assert project.status == "done"
        tasks = service.fairies.rooms[room_name].board.project_tasks(project.id)
        assert len(tasks) == 2 and all(t.status == "done" for t in tasks)
        # Each drone's box, drawn through the openai: model, inside its task's area.
        shapes = runtime.mirror.shapes
        assert sorted(shapes) == sorted(f"box-{t.id}" for t in tasks)
        for t in tasks:
            assert t.bounds is not None
            assert belongs(shape_bounds(shapes[f"box-{t.id}"], shapes), t.bounds), t.id
        assert clients[0].shapes == clients[1].shapes == shapes
        # Each role went to its own provider: drones to Chat Completions, the lead to Messages.
        assert chat.requests and {r["model"] for r in chat.requests} == {"qwen-drone-test"}
        assert {r["model"] for r in messages.requests} == {"claude-lead-test"}
        drone_modes = {m for m in (a.view.mode for a in responder.answered) if m}
        assert "working-drone" in drone_modes and "orchestrating-active" in drone_modes
        assert all(r["stream"] and r["messages"][0]["role"] == "system" for r in chat.requests)
        assert all("working-drone" in r["messages"][0]["content"] for r in chat.requests)
        # The drones' usage was recorded as the server reported it (100 prompt tokens each).
        async with database.pool.acquire() as conn:
            rows = await conn.fetch(
                "SELECT input_tokens, output_tokens FROM usage WHERE room_id = $1 AND model = $2",
                room_name,
                "openai:qwen-drone-test",
            )
        assert rows and all(r["input_tokens"] >= 100 and r["output_tokens"] > 0 for r in rows)
    finally:
        await close_all(clients)
        await service.close()
