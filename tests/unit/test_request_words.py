"""What the live by-hand session found in the crew's words: a drone reads its task once (not
in the project line, the task line and the steward's brief), a lead is told who its members
are and why, every mode word a request prints is explained, and the colour rule says what
tldraw draws (labels are black whatever the shape's colour)."""

from __future__ import annotations

import asyncio

from steward.actions.convert import simple_to_record
from steward.actions.registry import ACTIONS
from steward.fairies.modes import MODES, mode
from steward.fairies.project_task import Task
from steward.fairies.projects import Project
from steward.fairies.prompt_parts import FairyView, brief
from steward.fairies.roster import Fairy
from steward.fairies.runtime import FairyRuntime
from steward.ports import PromptInput
from steward.prompt.registry import PARTS
from steward.prompt.state import FairyBrief
from steward.protocol.box import Box
from steward_tools.memory_session import MemoryRoom, MemorySession, MemorySessions
from tests.unit.test_request_frame import Recording


async def _farm() -> Recording:
    browser = MemoryRoom()
    model = Recording()
    crew = (("fairy-1", "orchestrator"), ("fairy-2", "drone"), ("fairy-3", "drone"))
    runtime = FairyRuntime(sessions=MemorySessions(browser), models=lambda *_: model, crew=crew)
    lead = MemorySession(browser, room_id="words", fairy="lead")
    asked = PromptInput(message="draw a farm", source="browser", requester="alice")
    assert await asyncio.wait_for(runtime.run(lead, asked), 30) == "done"
    return model


async def test_a_drone_reads_its_task_once_and_a_lead_reads_who_its_members_are() -> None:
    model = await _farm()
    drones = [s for _, m, s in model.seen if m == "working-drone"]
    assert drones
    for said in drones:
        # The scripted lead's task text ("Draw the barn inside your area.") is told once.
        task = next(ln for ln in said.splitlines() if ln.startswith("You are working on: "))
        text = task.split("): ", 1)[1]
        assert said.count(text) == 1, said
        assert 'described above under "You are working on"' in said
    leads = [s for _, m, s in model.seen if m == "orchestrating-active" and "Members" in s]
    assert leads and all(
        "Members (every fairy free when the project started; give any of them a task): " in s
        for s in leads
    )


def test_every_mode_a_fairy_line_can_print_is_explained() -> None:
    guide = PARTS["other_fairies"].guide
    for name in MODES:
        assert name in guide, name


def test_the_colour_rule_says_labels_are_black_as_the_records_draw_them() -> None:
    guide = ACTIONS["create"].guide
    assert "labels inside geometric shapes, notes and arrows are always black" in guide
    assert "outline, text and fill colour" not in guide
    box = simple_to_record({"_type": "rectangle", "x": 0, "y": 0, "color": "red"}, "b")
    arrow = simple_to_record({"_type": "arrow", "x1": 0, "y1": 0, "color": "red"}, "a")
    assert box is not None and arrow is not None
    assert box["props"]["labelColor"] == "black" and arrow["props"]["labelColor"] == "black"
    assert "always black" in PARTS["drawable"].guide


def _duo_view(picked: bool) -> FairyBrief:
    text = "a stone quay along the top with three shops"
    quay = Task("quay", "room", "Quay", text, "in-progress", "p", "f2", Box(0, 0, 900, 300))
    water = Task("water", "room", "Water", "the water", "done", "p", "f3", Box(0, 300, 900, 300))
    view = FairyView(
        fairy=Fairy("f2", "Clover", "green", role="duo-orchestrator", mode="working-orchestrator"),
        mode=mode("working-orchestrator"),
        others=[],
        project=Project("p", "room", "Map", "a map", "quay; water", "duo", "f2", ("f3",)),
        project_tasks=[quay, water],
        task=quay,
        own_tasks=[],
        history=[],
        shapes={},
        viewport=Box(0, 0, 900, 300),
        picked=picked,
    )
    return brief(view)


def test_a_duo_lead_on_its_own_task_reads_it_once_and_knows_it_comes_back() -> None:
    said = "\n".join((*_duo_view(picked=True).project, *_duo_view(picked=True).tasks))
    assert said.count("a stone quay along the top") == 1  # its own task's text: once
    assert '- [quay] "Quay" (in-progress, yours): see "You are working on" below' in said
    assert "When you mark it done, you are called back to lead the project." in said
    assert "Members (every fairy picked with you; give any of them a task): f3" in said
    unpicked = "\n".join(_duo_view(picked=False).project)
    assert "Members (every fairy free when the project started;" in unpicked


def test_the_project_guide_lets_a_duo_lead_draw_its_own_task() -> None:
    guide = PARTS["project"].guide
    assert "A lead does not draw, except the lead of a duo" in guide
    assert "Leading, you do not draw" not in guide
