"""A model that keeps making the same mistake does not make the steward call it forever."""

from __future__ import annotations

import asyncio
import json

from structlog.testing import capture_logs

from steward.fairies.runtime import MAX_FEEDBACK, FairyRuntime
from steward.model.base import ModelRequest
from steward.ports import PromptInput
from steward_tools.canned_model import CannedModel
from steward_tools.memory_session import MemoryRoom, MemorySession, MemorySessions


def stubborn() -> CannedModel:
    """Always starts a project with a task for a fairy that does not exist."""
    model = CannedModel()

    def answer(_request: ModelRequest) -> str:
        actions = [
            {"_type": "start-project", "title": "P", "description": "d", "plan": "p"},
            {
                "_type": "create-project-task",
                "taskId": f"t{len(model.requests)}",
                "title": "T",
                "text": "x",
                "x": 0,
                "y": 0,
                "w": 100,
                "h": 100,
                "assignee": "nobody",
            },
        ]
        return ", ".join(json.dumps(a) for a in actions) + "]}"

    model.answer = answer
    return model


async def test_a_repeated_mistake_is_fed_back_a_bounded_number_of_times() -> None:
    model = stubborn()
    browser = MemoryRoom()
    runtime = FairyRuntime(sessions=MemorySessions(browser), models=lambda _n, _r: model)
    session = MemorySession(browser, room_id="room-a", fairy="lead")
    prompt = PromptInput(message="draw a farm", source="browser", requester="u")
    with capture_logs() as logs:
        await asyncio.wait_for(runtime.run(session, prompt), 30)
        room = runtime.rooms["room-a"]
        await asyncio.wait_for(runtime.wait_settled(room), 30)
    assert not [e for e in logs if e["log_level"] in ("error", "critical")]
    events = [e["event"] for e in logs]
    # It was told about its mistake, MAX_FEEDBACK times in a row, then no more.
    assert events.count("fairy_mistake") > MAX_FEEDBACK
    assert "fairy_feedback_capped" in events
    assert len(model.requests) <= 2 * MAX_FEEDBACK + 2, len(model.requests)
    assert not room.working()
