"""One frame per request: every number a model reads in one request (shapes, areas, tasks,
fairy positions, the steward's own lines, the history's echo of earlier actions, lints) is
in that request's frame and rounding, here with the canvas far from the page's origin.

A lead with two drones, a duo and a one-shot asker work in rooms whose views lie around
x 48,000, y -31,000: a page coordinate leaking into a request shows as a number in the tens
of thousands. The one-shot asker looks from elsewhere (its frame is not the crew's), so the
crew's earlier actions it is shown must be moved into its frame.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from typing import Any

from steward.canvas.coords import CoordinateSpace
from steward.config import Settings
from steward.fairies.one_shot_runner import OneShotConfig, OneShotRunner
from steward.fairies.prompt_parts import whereabouts
from steward.fairies.runtime import FairyRuntime
from steward.model.base import ModelRequest, Usage
from steward.model.scripted import ScriptedProjectModel
from steward.ports import PromptInput
from steward.protocol.box import Box
from steward_tools.canned_model import CannedModel
from steward_tools.memory_session import MemoryRoom, MemorySession, MemorySessions
from tests.support.request_frame import LEAK, frame_leaks, unrounded_numbers
from tests.unit.test_agent_core import body, box

FAR = Box(x=48_000.4, y=-31_000.6, w=1600, h=900)
# The one-shot asker's view: elsewhere, far too, so its frame differs from the crew's.
ELSEWHERE = Box(x=51_317.7, y=-29_547.2, w=1280, h=800)


class Recording(ScriptedProjectModel):
    """The scripted project model, keeping every request's words by fairy and mode."""

    def __init__(self) -> None:
        super().__init__(tokens_per_s=None)
        self.seen: list[tuple[str, str, str]] = []

    async def stream(self, request: ModelRequest, usage: Usage) -> AsyncIterator[str]:
        fairy: dict[str, Any] = request.hints.get("fairy") or {}
        said = "\n".join(str(b.get("text", "")) for b in request.user if b.get("type") == "text")
        self.seen.append((str(fairy.get("fairy_id", "one-shot")), str(fairy.get("mode")), said))
        async for chunk in super().stream(request, usage):
            yield chunk


def _ask(text: str, who: str = "alice") -> PromptInput:
    return PromptInput(message=text, source="browser", requester=who)


async def _project(room_id: str, crew: tuple[tuple[str, str], ...], asked: str) -> Recording:
    browser = MemoryRoom(viewport=FAR)
    model = Recording()
    runtime = FairyRuntime(sessions=MemorySessions(browser), models=lambda *_: model, crew=crew)
    lead = MemorySession(browser, room_id=room_id, fairy="lead")
    assert await asyncio.wait_for(runtime.run(lead, _ask(asked)), 30) == "done"
    return model


async def test_lead_drone_and_duo_requests_far_from_the_origin_read_in_their_frame() -> None:
    lead_crew = (("fairy-1", "orchestrator"), ("fairy-2", "drone"), ("fairy-3", "drone"))
    duo_crew = (("fairy-1", "duo-orchestrator"), ("fairy-2", "drone"))
    models = [
        await _project("far-lead", lead_crew, "draw a farm: a barn, a pond and a tree"),
        await _project("far-duo", duo_crew, "draw a garden"),
    ]
    seen = [s for m in models for s in m.seen]
    modes = {mode for _, mode, _ in seen}
    assert {"orchestrating-active", "working-drone", "duo-orchestrating-active"} <= modes
    for fairy, mode, said in seen:
        assert frame_leaks(said) == [], (fairy, mode, frame_leaks(said)[:5])
        assert unrounded_numbers(said) == [], (fairy, mode, unrounded_numbers(said)[:5])
    # Fairy positions, in the frame: in the view (a fairy at its task) or, for a fairy still
    # waiting at the page's start, far up and left of it; never the page's own numbers.
    # A fairy away from the view says so plainly ("far outside your view").
    positions = 0
    for _, _, said in seen:
        for x, y, where in re.findall(
            r"^- fairy-\d+ .* at \((-?\d+), (-?\d+)\)(.*)$", said, flags=re.M
        ):
            positions += 1
            in_view = abs(int(x)) < LEAK and abs(int(y)) < LEAK
            at_start = abs(int(x) + 48_000) < 2_000 and abs(int(y) - 31_001) < 2_000
            assert in_view or at_start, (x, y)
            assert at_start == (where == ", far outside your view"), (x, y, where)
    assert positions > 0
    # The lead's request names who asked the crew and how; a drone's brief (the steward's
    # words, not a person's) does not.
    leads = [s for _, m, s in seen if m in ("orchestrating-active", "duo-orchestrating-active")]
    assert any("Asked by alice, typed in the steward panel of their browser." in s for s in leads)
    drones = [said for _, mode, said in seen if mode == "working-drone"]
    assert not any("Asked by" in s for s in drones)
    # The steward's own lines are there to be checked: task bounds, the area, fairies.
    assert all("You can only see and edit inside your task area (x=" in s for s in drones)
    assert any(re.search(r": \w+ at \(-?\d+, -?\d+\)", s) for _, _, s in seen)


async def test_a_one_shot_asker_elsewhere_reads_the_crews_work_in_its_own_frame() -> None:
    browser = MemoryRoom(viewport=FAR)
    crew_model = Recording()
    crew = (("fairy-1", "orchestrator"), ("fairy-2", "drone"), ("fairy-3", "drone"))
    runtime = FairyRuntime(
        sessions=MemorySessions(browser), models=lambda *_: crew_model, crew=crew
    )
    lead = MemorySession(browser, room_id="far", fairy="lead")
    assert (
        await asyncio.wait_for(runtime.run(lead, _ask("draw a farm: a barn and a pond")), 30)
        == "done"
    )
    room = runtime.rooms["far"]
    assert room.origin == (48_000.0, -31_001.0)
    first = next(t for t in room.board.tasks.values() if t.bounds is not None)
    assert first.bounds is not None
    # Bob asks from his own view, elsewhere: his request's 0, 0 is its top-left, rounded.
    browser.viewport = ELSEWHERE
    one_shot = Recording()
    agent = OneShotRunner(OneShotConfig(settings=Settings(), model=one_shot, fairies=runtime))
    bob = MemorySession(browser, room_id="far", session_id="s-bob")
    assert await asyncio.wait_for(agent.run(bob, _ask("add a legend", "bob")), 20) == "done"
    (_, _, said), *_ = one_shot.seen
    assert frame_leaks(said) == [] and unrounded_numbers(said) == []
    assert "[alice's project run]" in said and "crew" not in said


async def test_an_askers_earlier_action_reads_in_the_frame_of_the_view_they_ask_from_now() -> None:
    """Alice draws a box from one view, pans 300 px right and 100 px down and asks again:
    her earlier `create` is echoed where the box now is in her new frame."""
    browser = MemoryRoom(viewport=FAR)
    draw = body(box("r1", 100, 100), {"_type": "message", "text": "Drew a box."})
    model = CannedModel([draw, body({"_type": "message", "text": "ok"})])
    agent = OneShotRunner(OneShotConfig(settings=Settings(), model=model, fairies=FairyRuntime()))
    alice = MemorySession(browser, room_id="pan", session_id="s-1")
    assert await asyncio.wait_for(agent.run(alice, _ask("draw a box")), 10) == "done"
    browser.viewport = Box(x=FAR.x + 300, y=FAR.y + 100, w=FAR.w, h=FAR.h)
    again = MemorySession(browser, room_id="pan", session_id="s-2")
    assert await asyncio.wait_for(agent.run(again, _ask("what is there?")), 10) == "done"
    said = "\n".join(str(b.get("text", "")) for b in model.requests[-1].user)
    assert '"shapeId":"r1","x":-200,"y":0' in said, said[-2000:]  # 100 - 300, 100 - 100
    assert '"bounds":{"x":-200,"y":0,"w":100,"h":50}' in said  # the canvas lists agree
    assert frame_leaks(said) == [] and unrounded_numbers(said) == []


def test_a_frame_starts_on_a_whole_pixel_at_its_view() -> None:
    """The frame's 0, 0 is the view's corner rounded as every coordinate is: whole, so
    frames differ by whole shifts, and the view starts within a pixel of 0, 0."""
    frame = CoordinateSpace.at(47_520.4, -31_400.6)
    assert (frame.origin_x, frame.origin_y) == (47_520.0, -31_401.0)
    assert frame.box_text(47_520.4, -31_400.6, 959.2, 800) == "x=0, y=0, w=959, h=800"


def test_a_fairy_away_from_the_view_is_said_to_be() -> None:
    """Fairies rest where they start, at the page's beginning: from a view around x 47,360
    one reads "idling at (-47360, 31460)", which looks like a page number leaking unless the
    line says plainly that it is far away."""
    view = Box(47_360, -31_460, 960, 600)
    assert whereabouts(view, 47_800, -31_200) == ""
    assert whereabouts(view, 47_360 + 1_200, -31_200) == ", outside your view"
    assert whereabouts(view, 0, 0) == ", far outside your view"
    # A drone's view is its task area: a fairy drawing 450 units beside it is not far.
    task_area = Box(x=30, y=40, w=170, h=455)
    assert whereabouts(task_area, 30 + 170 + 450, 200) == ", outside your view"
    assert whereabouts(task_area, 30 + 170 + 2_500, 200) == ", far outside your view"
