"""The request is true: after `setMyView` or a `review`, the next request's viewport text,
shape tiers and screenshot bounds all describe the new area, named for what it is; the
selection shown is the asker's when the prompt began, never one that rode along later."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from steward.actions.base import Scheduled
from steward.config import Settings
from steward.fairies.look import Gaze, Look
from steward.fairies.one_shot_runner import OneShotConfig, OneShotRunner
from steward.fairies.runtime import FairyRuntime
from steward.model.base import ModelRequest
from steward.model.scripted.project_model import ScriptedProjectModel
from steward.ports import PromptInput
from steward.protocol.box import Box
from steward_tools.canned_model import CannedModel
from steward_tools.memory_session import MemoryRoom, MemorySession, MemorySessions
from tests.unit.test_agent_core import body

NEAR = {"id": "near", "type": "geo", "x": 100, "y": 100, "props": {"w": 80, "h": 60}}
FAR = {"id": "far", "type": "geo", "x": 3000, "y": 100, "props": {"w": 80, "h": 60}}


def ask(text: str) -> PromptInput:
    return PromptInput(message=text, source="browser", requester="alice")


def texts(request: ModelRequest) -> str:
    return "\n".join(b["text"] for b in request.user if b.get("type") == "text")


def line(label: str, text: str) -> Any:
    start = text.index(label) + len(label)
    return json.loads(text[start:].split("\n", 1)[0])


def test_a_view_move_lasts_a_review_looks_once() -> None:
    gaze = Gaze(Look(None, "asker"))
    assert gaze.next(None) == Look(None, "asker")
    review = Scheduled("review", "check", Box(5, 5, 10, 10))
    assert gaze.next(review) == Look(Box(5, 5, 10, 10), "review")
    assert gaze.next(Scheduled("data", "count = 1")) == Look(None, "asker")
    moved = gaze.next(Scheduled("view", "look", Box(1, 2, 3, 4)))
    assert moved == Look(Box(1, 2, 3, 4), "own")
    assert gaze.next(Scheduled("review", "check", None)) == moved
    assert gaze.next(None) == moved


async def test_after_set_my_view_text_tiers_and_screenshot_move_together() -> None:
    model = CannedModel(
        [
            body({"_type": "setMyView", "intent": "right", "x": 2800, "y": 0, "w": 800, "h": 600}),
            body({"_type": "message", "text": "Seen it."}),
        ]
    )
    agent = OneShotRunner(OneShotConfig(settings=Settings(), model=model))
    session = MemorySession(MemoryRoom(shapes=[NEAR, FAR], selection=["near"]))
    assert await agent.run(session, ask("what is on the right?")) == "done"
    first, second = (texts(r) for r in model.requests)
    assert line("Your viewport (the user's view): ", first) == {
        "x": 0,
        "y": 0,
        "w": 1600,
        "h": 900,
    }
    assert '"shapeId":"near"' in first.split("Shapes in your view", 1)[1].split("Shapes out")[0]
    # The next request: the agent's own view, its shapes listed, the rest a cluster.
    view = line("Your viewport (your own view, where you moved it): ", second)
    assert view == {"x": 2800, "y": 0, "w": 800, "h": 600}
    assert line("The user's view (not the area shown): ", second)["w"] == 1600
    listed = second.split("Shapes in your view", 1)[1].split("Shapes outside", 1)[0]
    assert '"shapeId":"far"' in listed and "near" not in listed
    assert session.context_requests == [None, Box(x=2800, y=0, w=800, h=600)]
    assert model.requests[1].hints["viewport"] == view
    # The asker's selection at prompt time rides along into the follow-up too.
    assert "The user has selected:" in second


async def test_a_review_shows_its_area_once_with_its_name() -> None:
    model = CannedModel(
        [
            body({"_type": "review", "intent": "check", "x": 2900, "y": 50, "w": 400, "h": 300}),
            body({"_type": "message", "text": "Looks right."}),
        ]
    )
    agent = OneShotRunner(OneShotConfig(settings=Settings(), model=model))
    session = MemorySession(MemoryRoom(shapes=[NEAR, FAR]))
    assert await agent.run(session, ask("check the far box")) == "done"
    second = texts(model.requests[1])
    assert line("Your viewport (the area you asked to review): ", second) == {
        "x": 2900,
        "y": 50,
        "w": 400,
        "h": 300,
    }
    assert session.context_requests[1] == Box(x=2900, y=50, w=400, h=300)


async def test_the_selection_is_the_askers_when_the_run_began() -> None:
    model = CannedModel(
        [
            body({"_type": "setMyView", "intent": "right", "x": 2800, "y": 0, "w": 800, "h": 600}),
            body({"_type": "message", "text": "Done."}),
        ]
    )
    agent = OneShotRunner(OneShotConfig(settings=Settings(), model=model))
    session = MemorySession(MemoryRoom(shapes=[NEAR, FAR], selection=[]))
    original = session.request_context

    async def later_selection(**kw: Any) -> Any:
        ctx = await original(**kw)
        session.room.selection = ["far"]  # someone selects after the prompt began
        return ctx

    session.request_context = later_selection  # type: ignore[method-assign]
    assert await agent.run(session, ask("look right")) == "done"
    assert all("The user has selected" not in texts(r) for r in model.requests)


def recording() -> CannedModel:
    """The scripted project model's answers, keeping every request it was sent."""
    scripted = ScriptedProjectModel(tokens_per_s=None)
    return CannedModel(answer=lambda request: scripted.response_text(request.hints))


async def test_a_project_never_shows_a_selection_nobody_made_for_it() -> None:
    # The browser that answers the fairies' own sessions has something selected; the
    # asker's prompt session selects nothing. No turn of the project may show that selection.
    browser = MemoryRoom(shapes=[NEAR, FAR], selection=["near"])
    model = recording()
    runtime = FairyRuntime(sessions=MemorySessions(browser), models=lambda *_: model)
    # One canvas: the lead's session shares the room's canvases, not its selection.
    asker = MemoryRoom(selection=[], canvas=browser.canvas, browser=browser.browser)
    lead = MemorySession(asker, room_id="farm-room")
    routed = PromptInput(message="draw a farm", source="browser", requester="alice", fairy="lead")
    assert await asyncio.wait_for(runtime.run(lead, routed), 20) == "done"
    (project,) = runtime.rooms["farm-room"].board.projects.values()
    assert project.status == "done"
    modes = {r.hints["fairy"]["mode"] for r in model.requests}
    assert {"orchestrating-active", "working-drone"} <= modes
    assert all("The user has selected:" not in texts(r) for r in model.requests)
    # Each drone's request names its task area, and shows the area it names.
    drone = next(r for r in model.requests if r.hints["fairy"]["mode"] == "working-drone")
    assert "Your viewport (your task area): " in texts(drone)
    # Once its tasks have areas, the lead reviews its members' work where it is: the
    # project's area (every task area together), not the view it planned from.
    leads = [r for r in model.requests if r.hints["fairy"]["mode"] == "orchestrating-active"]
    named = "Your viewport (the area of the project you lead: all its task areas): "
    reviews = [r for r in leads if named in texts(r)]
    assert reviews, [texts(r)[:200] for r in leads]
    tasks = runtime.rooms["farm-room"].board.project_tasks(project.id)
    xs = [t.bounds.x for t in tasks if t.bounds] + [t.bounds.max_x for t in tasks if t.bounds]
    area = line(named, texts(reviews[-1]))
    assert area["w"] == max(xs) - min(xs)  # every task area, side to side


async def test_a_fairy_after_set_my_view_is_shown_its_own_view() -> None:
    model = CannedModel(
        [
            body({"_type": "setMyView", "intent": "right", "x": 2800, "y": 0, "w": 800, "h": 600}),
            body({"_type": "message", "text": "Seen it."}),
        ]
    )
    runtime = FairyRuntime(models=lambda *_: model, crew=(("fairy-1", "drone"),))
    lent = MemorySession(MemoryRoom(shapes=[NEAR, FAR]), room_id="own-room")
    prompt = PromptInput(message="look", source="browser", requester="alice", fairy="fairy-1")
    assert await runtime.run(lent, prompt) == "done"
    second = texts(model.requests[1])
    view = line("Your viewport (your own view, where you moved it): ", second)
    assert view == {"x": 2800, "y": 0, "w": 800, "h": 600}
    listed = second.split("Shapes in your view", 1)[1].split("Shapes outside", 1)[0]
    assert '"shapeId":"far"' in listed and "near" not in listed
    assert lent.context_requests[1] == Box(x=2800, y=0, w=800, h=600)


async def test_a_fairys_review_shows_the_review_area_then_its_view_again() -> None:
    area = {"x": 2900, "y": 50, "w": 400, "h": 300}
    model = CannedModel(
        [
            body({"_type": "review", "intent": "check", **area}),
            body({"_type": "count", "expression": "all"}),
            body({"_type": "message", "text": "Checked."}),
        ]
    )
    runtime = FairyRuntime(models=lambda *_: model, crew=(("fairy-1", "drone"),))
    lent = MemorySession(MemoryRoom(shapes=[NEAR, FAR]), room_id="review-room")
    prompt = PromptInput(message="check", source="browser", requester="alice", fairy="fairy-1")
    assert await runtime.run(lent, prompt) == "done"
    reviewed, after = texts(model.requests[1]), texts(model.requests[2])
    assert line("Your viewport (the area you asked to review): ", reviewed) == area
    listed = reviewed.split("Shapes in your view", 1)[1].split("Shapes outside", 1)[0]
    assert '"shapeId":"far"' in listed and "near" not in listed
    assert lent.context_requests[1] == Box(x=2900, y=50, w=400, h=300)
    # The review was for that request only: the next one looks where the turn began.
    assert "Your viewport (the user's view): " in after
    assert lent.context_requests[2] is None
