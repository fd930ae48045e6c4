"""Whole scripted flows in process: solo, duo, a user stopping a drone, model choice, and an
orchestrator that awaits tasks which finished meanwhile."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from steward.canvas.bounds import shape_bounds
from steward.config import ModelRole, Settings
from steward.fairies.role_models import models_from_settings
from steward.fairies.room_fairies import RoomFairies
from steward.fairies.runtime import FairyRuntime
from steward.model.base import ModelProvider, ModelRequest, Usage
from steward.model.scripted.project_model import (
    TASK_OVERLAP,
    ScriptedProjectModel,
    plan_areas,
    task_titles,
)
from steward.ports import PromptInput
from steward.protocol.box import Box
from steward.turns.bounds_guard import belongs
from steward_tools.memory_session import MemoryRoom, MemorySession, MemorySessions
from tests.conftest import wait_for
from tests.support.drone_counts import planned_per_task


def _prompt(text: str, **kw: Any) -> PromptInput:
    return PromptInput(message=text, source="browser", requester="u", **kw)


def _feedback(room: RoomFairies) -> list[str]:
    return [i.text for f in room.fairies.values() for i in f.history if i.kind == "feedback"]


def _inside(browser: MemoryRoom, room: RoomFairies, prefix: str) -> int:
    """How many shapes of each task lie inside its task bounds (all of them must)."""
    n = 0
    for t in room.board.tasks.values():
        mine = [s for s in browser.canvas.shapes.values() if s["id"].startswith(t.id + "-")]
        assert t.bounds is not None and t.id.startswith(prefix)
        assert all(belongs(shape_bounds(s), t.bounds) for s in mine), t.id
        n += len(mine)
    return n


async def test_solo_fairy_plans_two_tasks_and_works_them_in_turn() -> None:
    browser = MemoryRoom()
    runtime = FairyRuntime(sessions=MemorySessions(browser), crew=(("fairy-1", "solo"),))
    lead = MemorySession(browser, room_id="solo-room", fairy="lead")
    assert await runtime.run(lead, _prompt("draw a harbour")) == "done"
    room = runtime.rooms["solo-room"]
    tasks = room.board.solo_tasks_of("fairy-1")
    assert [t.status for t in tasks] == ["done", "done"]
    assert _inside(browser, room, "solo-") == planned_per_task(room.board).total()
    assert room.roster.get("fairy-1").mode == "idling"
    assert _feedback(room) == []
    # One fairy, one session: everything went through the prompt's own session in order.
    assert {sid for sid, *_ in browser.sent} == {lead.session_id}


async def test_duo_lead_works_one_task_and_its_partner_the_other() -> None:
    browser = MemoryRoom()
    crew = (("fairy-1", "duo-orchestrator"), ("fairy-2", "drone"))
    runtime = FairyRuntime(sessions=MemorySessions(browser), crew=crew)
    lead = MemorySession(browser, room_id="duo-room", fairy="lead")
    assert await runtime.run(lead, _prompt("draw a garden")) == "done"
    room = runtime.rooms["duo-room"]
    (project,) = room.board.projects.values()
    assert project.kind == "duo" and project.status == "done"
    assert project.members == ("fairy-2",)
    tasks = {t.assigned_to: t for t in room.board.project_tasks(project.id)}
    assert set(tasks) == {"fairy-1", "fairy-2"}
    assert all(t.status == "done" for t in tasks.values())
    assert _inside(browser, room, "part-") == planned_per_task(room.board).total()
    lead_parts = {
        a.params["id"].rsplit("-", 1)[0]
        for sid, _, _, acts in browser.sent
        if sid == lead.session_id
        for a in acts
        if a.name == "create_shape"
    }
    assert lead_parts == {tasks["fairy-1"].id}  # the lead drew its own part in its session
    assert _feedback(room) == []
    assert {f.mode for f in room.roster.fairies.values()} == {"idling"}


class GateModel(ScriptedProjectModel):
    """Drones stop before their first shape until `gate` opens; records model names."""

    def __init__(self, name: str, seen: list[str], gate: asyncio.Event) -> None:
        super().__init__(tokens_per_s=None)
        self.name = name
        self.seen = seen
        self.gate = gate
        self.waiting: list[str] = []

    async def stream(self, request: ModelRequest, usage: Usage) -> AsyncIterator[str]:
        fairy: dict[str, Any] = request.hints.get("fairy") or {}
        self.seen.append(f"{fairy.get('fairy_id')}:{self.name}")
        text = self.response_text(request.hints)
        cut = text.find('"create"') if fairy.get("mode") == "working-drone" else -1
        for i in range(0, len(text), 8):
            if cut >= 0 and i >= cut and not self.gate.is_set():
                self.waiting.append(str(fairy.get("fairy_id")))
                await self.gate.wait()
            await asyncio.sleep(0)
            yield text[i : i + 8]


async def test_a_user_stopping_a_drone_puts_its_task_back_and_tells_the_lead() -> None:
    browser = MemoryRoom()
    seen: list[str] = []
    gate = asyncio.Event()
    models: dict[str | None, ModelProvider] = {}

    def factory(name: str | None, role: ModelRole = "one-shot") -> ModelProvider:
        return models.setdefault(name, GateModel(name or "default", seen, gate))

    runtime = FairyRuntime(sessions=MemorySessions(browser), models=factory)
    lead = MemorySession(browser, room_id="r", fairy="lead")
    run = asyncio.create_task(runtime.run(lead, _prompt("draw a farm", model="fast")))
    model = factory("fast")
    assert isinstance(model, GateModel)
    await wait_for(lambda: len(model.waiting) >= 2)
    room = runtime.rooms["r"]
    task = room.board.working_task_of("fairy-2")
    assert task is not None
    # Users cannot stop the orchestrator mid-project; they can stop a drone.
    assert await runtime.cancel("r", "fairy-1") is not None
    assert await runtime.cancel("r", "fairy-2") is None
    assert room.board.tasks[task.id].status == "todo"
    assert room.roster.get("fairy-2").mode == "standing-by"
    assert not any(c.key.endswith(task.id) for c in room.waits.conditions)
    gate.set()
    assert await asyncio.wait_for(run, 10) == "done"
    (project,) = room.board.projects.values()
    assert project.status == "done"
    assert [t.status for t in room.board.project_tasks(project.id)] == ["done", "done"]
    lead_prompts = [i.text for i in room.history_of("fairy-1") if i.kind == "prompt"]
    assert any("stopped by a user" in p for p in lead_prompts)
    assert not browser.canvas.in_flight()
    assert len(browser.canvas.shapes) == planned_per_task(room.board).total()
    # The prompt's model drove every turn, the directed drones' included.
    assert seen and all(s.endswith(":fast") for s in seen)
    assert {s.split(":")[0] for s in seen} == {"fairy-1", "fairy-2", "fairy-3"}


class LateAwaitModel(ScriptedProjectModel):
    """The orchestrator's first review is slow: part-2 finishes while it is answering."""

    def __init__(self, done: asyncio.Event) -> None:
        super().__init__(tokens_per_s=None)
        self.done = done
        self.reviews = 0

    async def stream(self, request: ModelRequest, usage: Usage) -> AsyncIterator[str]:
        fairy: dict[str, Any] = request.hints.get("fairy") or {}
        text = self.response_text(request.hints)
        slow = fairy.get("mode") == "orchestrating-active" and fairy.get("project")
        if slow:
            self.reviews += 1
        if fairy.get("fairy_id") == "fairy-3" and fairy.get("mode") == "working-drone":
            await asyncio.sleep(0.05)  # part-2 ends after part-1
        cut = text.find('"await-tasks') if slow and self.reviews == 1 else -1
        for i in range(0, len(text), 8):
            if 0 <= cut < i + 8:
                await self.done.wait()  # part-2 completes before the await arrives
            await asyncio.sleep(0)
            yield text[i : i + 8]


async def test_awaiting_a_task_that_just_finished_is_not_a_mistake() -> None:
    browser = MemoryRoom()
    done = asyncio.Event()
    model = LateAwaitModel(done)
    runtime = FairyRuntime(sessions=MemorySessions(browser), models=lambda _name, _role: model)
    lead = MemorySession(browser, room_id="late", fairy="lead")
    run = asyncio.create_task(runtime.run(lead, _prompt("draw a farm")))
    await wait_for(lambda: "late" in runtime.rooms and model.reviews >= 1)
    room = runtime.rooms["late"]
    await wait_for(lambda: all(t.status == "done" for t in room.board.tasks.values()))
    done.set()
    assert await asyncio.wait_for(run, 10) == "done"
    (project,) = room.board.projects.values()
    assert project.status == "done"
    awaits = [i for i in room.history_of("fairy-1") if i.text == "await-tasks-completion"]
    assert len(awaits) == 2  # the second named part-2 after it had finished …
    assert _feedback(room) == []  # … and was taken as "review now", not as a mistake


def _seen(sid: str, x: int, y: int, w: int, h: int, note: str = "") -> dict[str, object]:
    return {"id": sid, "type": "rectangle", "note": note, "at": [x, y], "box": [x, y, w, h]}


def test_planned_task_areas_go_into_free_space_in_the_viewport() -> None:
    view = {"x": 0, "y": 0, "w": 1600, "h": 900}
    inside = Box(0, 0, 1600, 900)

    def rects(areas: list[dict[str, int]]) -> list[Box]:
        return [Box(a["x"], a["y"], a["w"], a["h"]) for a in areas]

    free = rects(plan_areas(view, 2))
    assert all(inside.contains(r) for r in free)
    assert free[1].x == free[0].max_x - TASK_OVERLAP and free[0].y == free[1].y
    taken = Box(100, 500, 600, 300)
    busy = rects(plan_areas(view, 3, [_seen("big", 100, 500, 600, 300)]))
    assert all(inside.contains(r) and not r.intersects(taken) for r in busy)
    chart = [
        _seen("c1", 200, 100, 250, 100, "drawing 1: flow chart of signup"),
        _seen("c2", 600, 100, 250, 100, "drawing 1: flow chart of signup"),
    ]
    below = rects(plan_areas(view, 2, chart, "draw a farm below the flow chart"))
    assert all(r.y >= 200 and inside.contains(r) for r in below)
    assert task_titles("farm", 3) == ["The barn", "The tree", "The field"]
    assert task_titles("dragon", 2) == ["Left part of dragon", "Right part of dragon"]


async def test_each_turn_runs_on_its_roles_model() -> None:
    """Orchestrator, duo lead and drones ask the factory for their own role's model."""
    asked: list[tuple[str | None, ModelRole]] = []
    model = ScriptedProjectModel(tokens_per_s=None)

    def factory(name: str | None, role: ModelRole) -> ModelProvider:
        asked.append((name, role))
        return model

    for crew, roles in (
        ((("fairy-1", "orchestrator"), ("fairy-2", "drone")), {"orchestrator", "drone"}),
        ((("fairy-1", "duo-orchestrator"), ("fairy-2", "drone")), {"duo", "drone"}),
        ((("fairy-1", "solo"),), {"one-shot"}),
    ):
        asked.clear()
        browser = MemoryRoom()
        runtime = FairyRuntime(sessions=MemorySessions(browser), models=factory, crew=crew)  # type: ignore[arg-type]
        assert (
            await runtime.run(MemorySession(browser, room_id="r", fairy="lead"), _prompt("draw"))
            == "done"
        )
        assert {role for _, role in asked} == roles
        assert {name for name, _ in asked} == {None}


def test_models_from_settings_picks_the_roles_model() -> None:
    settings = Settings(
        steward_model="replay:/tmp/default.jsonl", steward_model_drone="replay:/tmp/drone.jsonl"
    )
    make = models_from_settings(settings)
    assert make(None, "drone").name == "replay:/tmp/drone.jsonl"
    assert make(None, "orchestrator").name == "replay:/tmp/default.jsonl"
    assert make("replay:/tmp/asked.jsonl", "drone").name == "replay:/tmp/asked.jsonl"


class RecordingProjectModel(ScriptedProjectModel):
    """Keeps each request's text by fairy and mode; the lead directs one task at a time (for
    its one drone), and the drone adds one todo item per task."""

    def __init__(self) -> None:
        super().__init__(tokens_per_s=None)
        self.seen: list[tuple[str, str, str]] = []

    def actions_for(self, hints: dict[str, Any]) -> list[dict[str, Any]]:
        acts = super().actions_for(hints)
        fairy: dict[str, Any] = hints.get("fairy") or {}
        if fairy.get("mode") == "orchestrating-active":  # one drone: one task at a time
            busy = any(t["status"] == "in-progress" for t in fairy.get("tasks") or [])
            directs = [a for a in acts if a["_type"] == "direct-to-start-project-task"]
            acts = [a for a in acts if a not in (directs if busy else directs[1:])]
            started = {a["taskId"] for a in acts if a["_type"] == "direct-to-start-project-task"}
            started |= {t["id"] for t in fairy.get("tasks") or [] if t["status"] == "in-progress"}
            for a in acts:
                if a["_type"] == "await-tasks-completion":
                    a["taskIds"] = [t for t in a["taskIds"] if t in started]
        task = fairy.get("task") or {}
        if fairy.get("mode") == "working-drone" and task:
            step = {"_type": "update-todo-list", "id": 1, "status": "done"}
            acts.insert(0, step | {"text": f"Draw all of {task['id']}"})
        return acts

    async def stream(self, request: ModelRequest, usage: Usage) -> AsyncIterator[str]:
        fairy: dict[str, Any] = request.hints.get("fairy") or {}
        said = "\n".join(str(b.get("text", "")) for b in request.user if b.get("type") == "text")
        self.seen.append((str(fairy.get("fairy_id")), str(fairy.get("mode")), said))
        async for chunk in super().stream(request, usage):
            yield chunk


def _history_part(said: str) -> str:
    start = said.find("Earlier in this chat:")
    assert start >= 0, "no history in the request"
    return said[start : said.find("\nUser request:", start)]


async def test_every_orchestrator_review_carries_the_request_and_the_plan() -> None:
    """One drone works both tasks in turn: after the second task, the lead's review still
    shows the user's request and its plan; the drone starts its second task with an empty
    todo list (the first task's items are gone)."""
    browser = MemoryRoom()
    model = RecordingProjectModel()
    crew = (("fairy-1", "orchestrator"), ("fairy-2", "drone"))
    runtime = FairyRuntime(sessions=MemorySessions(browser), models=lambda _n, _r: model, crew=crew)
    asked = "draw a farm: a red barn with a fenced paddock around it"
    lead = MemorySession(browser, room_id="review", fairy="lead")
    assert await asyncio.wait_for(runtime.run(lead, _prompt(asked)), 20) == "done"
    reviews = [
        said
        for fid, mode, said in model.seen
        if fid == "fairy-1" and mode == "orchestrating-active" and "Review it." in said
    ]
    assert len(reviews) >= 2
    for said in reviews:
        history = _history_part(said)
        assert f"[u asked] {asked}" in history
        assert '[you] {"_type":"start-project"' in history
        assert history.count('"_type":"create-project-task"') == 2
    assert "by fairy-2 is done" in _history_part(reviews[-1])  # the first task's review
    firsts = [
        said
        for i, (fid, mode, said) in enumerate(model.seen)
        if fid == "fairy-2"
        and mode == "working-drone"
        and (i == 0 or model.seen[i - 1][:2] != (fid, mode))
    ]
    tasks = sorted({t.id for t in room_tasks(runtime, "review")})
    assert len(tasks) == 2 and len(firsts) >= 2
    assert f"Draw all of {tasks[0]}" not in firsts[-1]  # the last task's todo list is gone
    assert runtime.rooms["review"].fairy("fairy-2").todo[0].text == f"Draw all of {tasks[1]}"


def room_tasks(runtime: FairyRuntime, room_id: str) -> list[Any]:
    return list(runtime.rooms[room_id].board.tasks.values())
