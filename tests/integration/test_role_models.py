"""Each role's requests, through the real `anthropic:` provider: its own model, temperature 0
and the guidance sections of exactly what its mode may see and do.

A project (orchestrator + two drones) and a duo run against the local Messages server, each
request answered by `PlanResponder` from that request alone.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from steward.actions.registry import ACTIONS
from steward.config import Settings
from steward.fairies.modes import MODES, Role, model_role
from steward.fairies.role_models import models_from_settings
from steward.fairies.runtime import FairyRuntime
from steward.ports import PromptInput
from steward.prompt.registry import PARTS
from steward.prompt.system_prompt import flow
from steward_tools.memory_session import MemoryRoom, MemorySession, MemorySessions
from steward_tools.rigs.responders import PlanResponder
from tests.support.anthropic_fake import FakeAnthropic, StartFake

pytestmark = pytest.mark.integration

ROLE_MODELS = {
    "one-shot": "claude-one-shot-test",
    "orchestrator": "claude-orchestrator-test",
    "duo": "claude-duo-test",
    "drone": "claude-drone-test",
}


@pytest.fixture
async def fake(start_fake_anthropic: StartFake) -> FakeAnthropic:
    return await start_fake_anthropic(responder=PlanResponder(seed=3))


def _settings(fake: FakeAnthropic) -> Settings:
    roles = {
        f"steward_model_{r.replace('-', '_')}": f"anthropic:{m}" for r, m in ROLE_MODELS.items()
    }
    return Settings(
        anthropic_base_url=f"http://127.0.0.1:{fake.port}", steward_model="scripted", **roles
    )  # type: ignore[arg-type]


def _mode_of(body: dict[str, Any]) -> str:
    system = "".join(block["text"] for block in body["system"])
    found = re.match(r"# Canvas agent \(([a-z-]+)\)", system)
    assert found, system[:80]
    return found.group(1)


def _check(body: dict[str, Any]) -> str:
    """The request carries its role's model, temperature 0 and exactly its mode's sections."""
    name = _mode_of(body)
    mode = MODES[name]  # type: ignore[index]
    assert body["model"] == ROLE_MODELS[model_role(mode.name)], name
    assert body["temperature"] == 0, name
    system = "".join(block["text"] for block in body["system"])
    for action, spec in ACTIONS.items():
        if spec.guide:
            taught = f"### `{action}`\n{flow(spec.guide)}" in system
            assert taught == (action in mode.actions), (name, action)
    for part in mode.parts:
        if PARTS[part].guide:
            assert flow(PARTS[part].guide) in system, (name, part)
    assert '"anyOf"' in system.split("## Response JSON schema", 1)[1], name
    return name


@pytest.mark.parametrize(
    ("crew", "roles"),
    [
        (
            (("fairy-1", "orchestrator"), ("fairy-2", "drone"), ("fairy-3", "drone")),
            {"orchestrator", "drone"},
        ),
        ((("fairy-1", "duo-orchestrator"), ("fairy-2", "drone")), {"duo", "drone"}),
    ],
)
async def test_every_role_runs_on_its_model_with_its_guidance(
    fake: FakeAnthropic, crew: tuple[tuple[str, Role], ...], roles: set[str]
) -> None:
    browser = MemoryRoom()
    runtime = FairyRuntime(
        sessions=MemorySessions(browser), models=models_from_settings(_settings(fake)), crew=crew
    )
    prompt = PromptInput(message="draw two boxes", source="browser", requester="u")
    assert await runtime.run(MemorySession(browser, room_id="r", fairy="lead"), prompt) == "done"
    project = next(iter(runtime.rooms["r"].board.projects.values()))
    assert project.status == "done"
    modes = [_check(body) for body in fake.requests]
    assert {model_role(m) for m in modes} == roles  # type: ignore[arg-type]
    assert len(browser.canvas.shapes) == len(crew) - (0 if "duo" in roles else 1)
