"""Replies that go on after a turn-ending action, through the real `anthropic:` provider.

A whole fairy project runs against the local Messages server, whose test model appends a
message and a shape after every action that ends a turn (await-tasks-completion,
mark-my-task-done, end-project) and reports a distinct output token count per reply. The
usage rows in the real Postgres must add up to exactly what the server reported, and nothing
written after an ending action may reach the canvas or the chat.
"""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass, field
from typing import Any

import pytest

from steward.config import Settings
from steward.fairies.role_models import models_from_settings
from steward.fairies.runtime import FairyRuntime
from steward.ports import PromptInput
from steward.store.database import Database
from steward.store.usage import UsageRepo
from steward.turns.model_budget import RoomBudget
from steward_tools.memory_session import MemoryRoom, MemorySession, MemorySessions
from steward_tools.rigs.anthropic_server import Reply
from steward_tools.rigs.responders import PlanResponder, RequestView
from tests.support.anthropic_fake import StartFake

pytestmark = pytest.mark.integration

ENDING = {"await-tasks-completion", "mark-my-task-done", "end-project"}
AFTER = "written after the turn ended"


@dataclass
class TalkingOn(PlanResponder):
    """PlanResponder whose replies continue after a turn-ending action."""

    reported: list[int] = field(default_factory=list)
    continued: list[str] = field(default_factory=list)

    def actions(self, view: RequestView) -> list[dict[str, Any]]:
        actions = super().actions(view)
        ends = [i for i, a in enumerate(actions) if a.get("_type") in ENDING]
        if ends:
            self.continued.append(str(actions[ends[0]]["_type"]))
            n = len(self.continued)
            late = {"_type": "rectangle", "shapeId": f"late-{n}", "x": 0, "y": 0, "w": 9, "h": 9}
            actions += [
                {"_type": "message", "text": AFTER},
                {"_type": "create", "intent": "late", "shape": late},
            ]
        return actions

    def __call__(self, body: dict[str, Any]) -> Reply:
        reply = super().__call__(body)
        tokens = 200 + 37 * len(self.reported)  # distinct per reply, well above the default
        self.reported.append(tokens)
        return dataclasses.replace(reply, output_tokens=tokens)


async def test_usage_after_a_turn_ending_action_is_counted_exactly(
    database: Database, start_fake_anthropic: StartFake
) -> None:
    responder = TalkingOn(seed=3)
    fake = await start_fake_anthropic(responder=responder)
    settings = Settings(
        anthropic_base_url=f"http://127.0.0.1:{fake.port}",
        steward_model="anthropic:claude-fairy-test",
    )
    browser = MemoryRoom()
    runtime = FairyRuntime(
        sessions=MemorySessions(browser),
        models=models_from_settings(settings),
        budget=RoomBudget(UsageRepo(database.pool), 100.0),
    )
    lead = MemorySession(browser, room_id="tail", fairy="alice")
    prompt = PromptInput(message="project: draw two boxes", source="http", requester="alice")
    assert await asyncio.wait_for(runtime.run(lead, prompt), 60) == "done"
    await asyncio.wait_for(runtime.wait_settled(runtime.rooms["tail"]), 60)

    # Every kind of turn-ending action was followed by more text, and the project finished.
    assert ENDING <= set(responder.continued)
    (project,) = runtime.rooms["tail"].board.projects.values()
    assert project.status == "done"
    # Recorded: exactly the output tokens the server reported, over every reply.
    row = await database.pool.fetchrow(
        "SELECT count(*) AS n, sum(output_tokens) AS o, sum(input_tokens) AS i, "
        "sum(cost_usd) AS cost FROM usage WHERE room_id = 'tail'"
    )
    assert row is not None
    assert len(fake.requests) == len(responder.reported) >= 5
    assert row["n"] == len(responder.reported)
    assert row["o"] == sum(responder.reported)
    assert row["i"] == 100 * len(responder.reported)
    # Cost follows the counted tokens (sonnet prices for an unknown model name).
    total = sum(responder.reported) * 15 + int(row["i"]) * 3 + row["n"] * (50 * 3.75 + 20 * 0.3)
    # (each row keeps its cost to the micro-dollar)
    assert float(row["cost"]) == pytest.approx(total / 1e6, abs=1e-6 * row["n"])
    # Nothing after an ending action was applied or said.
    assert not [sid for sid in browser.canvas.shapes if sid.startswith("late-")]
    assert AFTER not in browser.chat
