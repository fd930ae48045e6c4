"""A fairy that plans drawings is told what its members can draw: the shape kinds and the
palette, in the drawing modes' own words."""

from __future__ import annotations

import asyncio

import pytest

from steward.canvas.styles import COLORS, FILL_LOOKS, GEO_KINDS
from steward.fairies.modes import MODES
from steward.fairies.runtime import FairyRuntime
from steward.ports import PromptInput
from steward.prompt.registry import PARTS
from steward.prompt.system_prompt import system_prompt
from steward_tools.memory_session import MemoryRoom, MemorySession, MemorySessions
from tests.unit.test_request_frame import Recording


def _prompt(name: str) -> str:
    m = MODES[name]  # type: ignore[index]
    return system_prompt(m.actions, [PARTS[n] for n in m.parts], m.name)


@pytest.mark.parametrize("name", ["orchestrating-active", "duo-orchestrating-active"])
def test_a_planning_prompt_lists_the_palette_and_the_shape_kinds(name: str) -> None:
    assert "create" not in MODES[name].actions  # type: ignore[index]  # it plans, not draws
    text = _prompt(name)
    for colour in COLORS:
        assert f"- Colour `{colour}`:" in text
    for fill, looks in FILL_LOOKS.items():
        assert f"- Fill `{fill}`: {looks}." in text
    assert ", ".join(GEO_KINDS) in text and "(a pen stroke)" in text
    assert "`pen`" not in text  # an action it does not have: its members' actions are listed


async def test_a_lead_is_told_its_members_actions() -> None:
    """A lead has no drawing action; its request lists what a member working a task can
    write (is there a `pen`? a `sendBackward`?), before and after it starts its project."""
    browser = MemoryRoom()
    model = Recording()
    crew = (("fairy-1", "orchestrator"), ("fairy-2", "drone"))
    runtime = FairyRuntime(sessions=MemorySessions(browser), models=lambda *_: model, crew=crew)
    lead = MemorySession(browser, room_id="kit", fairy="lead")
    asked = PromptInput(message="draw a barn", source="browser", requester="alice")
    assert await asyncio.wait_for(runtime.run(lead, asked), 30) == "done"
    leads = [s for _, m, s in model.seen if m == "orchestrating-active"]
    drones = [s for _, m, s in model.seen if m == "working-drone"]
    assert leads and drones
    listed = f"can use only these actions: {', '.join(MODES['working-drone'].actions)}"
    assert all(listed in s for s in leads), leads[0][:1500]
    assert "pen" in MODES["working-drone"].actions and "sendBackward" in listed
    assert not any("can use only these actions" in s for s in drones)


def test_the_palette_lines_are_the_drawing_modes_own() -> None:
    drawing, planning = _prompt("working-drone"), _prompt("orchestrating-active")
    lines = [ln for ln in drawing.splitlines() if ln.startswith(("- Colour `", "- Fill `"))]
    assert len(lines) == len(COLORS) + len(FILL_LOOKS)
    assert all(ln in planning.splitlines() for ln in lines)
