"""Fairy state in real Postgres: a project survives its steward dying mid-project.

The in-process sessions write the real outbox table as the room runtime does; the full
room + subprocess kill -9 variant lives in test_fairies_room.py.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import AsyncIterator
from typing import Any

import pytest

from steward.config import Settings
from steward.fairies.persistence import fairy_row, project_row, task_row
from steward.fairies.project_task import Task
from steward.fairies.projects import task_completed_key
from steward.fairies.resume import withdraw_in_flight
from steward.fairies.role_models import models_from_settings
from steward.fairies.runtime import FairyRuntime
from steward.model.base import ModelProvider, ModelRequest, Usage
from steward.model.scripted.project_model import ScriptedProjectModel
from steward.ports import PromptInput
from steward.protocol.box import Box
from steward.protocol.messages import WireAction
from steward.store.database import Database
from steward.store.fairies import FairyStore
from steward.store.outbox import Outbox
from steward_tools.memory_session import MemoryRoom, MemorySession, MemorySessions
from steward_tools.rigs.responders import PlanResponder
from tests.conftest import wait_for
from tests.support.anthropic_fake import StartFake
from tests.support.drone_counts import by_task, planned_per_task

pytestmark = pytest.mark.integration


class FreezingModel(ScriptedProjectModel):
    """Drones stop for good halfway through their last shape (a partial is in flight)."""

    def __init__(self, frozen: list[str]) -> None:
        super().__init__(tokens_per_s=None)
        self.frozen = frozen

    async def stream(self, request: ModelRequest, usage: Usage) -> AsyncIterator[str]:
        text = self.response_text(request.hints)
        fairy: dict[str, Any] = request.hints.get("fairy") or {}
        cut = len(text)
        if fairy.get("mode") == "working-drone":
            # Inside the label, the last shape: its partial is in flight when it stops.
            cut = text.find('"text"', text.find("-label")) if "-label" in text else len(text)
        for i in range(0, len(text), 4):
            if i >= cut:
                self.frozen.append(str(fairy.get("fairy_id")))
                await asyncio.Event().wait()
            await asyncio.sleep(0)
            yield text[i : i + 4]


async def test_project_resumes_after_the_steward_dies(database: Database) -> None:
    store = FairyStore(database.pool)
    browser = MemoryRoom(outbox=Outbox(database.pool))
    await browser.outbox.ensure_room("farm", "relay")  # type: ignore[union-attr]
    frozen: list[str] = []
    freezing: ModelProvider = FreezingModel(frozen)
    first = FairyRuntime(
        store=store, sessions=MemorySessions(browser), models=lambda _name, _role: freezing
    )
    lead = MemorySession(browser, room_id="farm", fairy="lead")
    run = asyncio.create_task(
        first.run(lead, PromptInput(message="draw a farm", source="browser", requester="u"))
    )
    await wait_for(lambda: len(frozen) >= 2)  # both drones are stuck mid-shape
    in_flight = [a.id for _, _, partial, acts in browser.sent if partial for a in acts]
    assert in_flight, "a partial action should be in flight when the steward dies"
    # "kill": every task of the first steward stops; nothing is cleaned up or saved.
    room = first.rooms["farm"]
    for t in [run, *room.working()]:
        t.cancel()
    await asyncio.gather(run, *room.working(), return_exceptions=True)
    before = dict(browser.canvas.shapes)

    second = FairyRuntime(store=store, sessions=MemorySessions(browser))
    assert await second.resume("farm") >= 2
    # The drones still work for who started the project (their cancel rights), after a restart.
    resumed = second.rooms["farm"]
    drones = [fid for fid, f in resumed.roster.fairies.items() if f.role == "drone"]
    assert drones and {resumed.fairy(d).asker for d in drones} == {"u"}
    await second.wait_settled(second.rooms["farm"])
    board = second.rooms["farm"].board
    (project,) = board.projects.values()
    assert project.status == "done"
    assert [t.status for t in board.project_tasks(project.id)] == ["done", "done"]
    ids = list(browser.canvas.shapes)
    # Every task's drawing exactly once: none twice, no renamed duplicates.
    assert by_task(ids) == planned_per_task(board), ids
    assert set(before) <= set(ids)
    assert not browser.canvas.in_flight()  # the dead partials were reverted or completed
    # Everything durable agrees.
    (row,) = await store.load_projects("farm")
    assert row["status"] == "done"
    assert await store.open_requests("farm") == []
    assert await store.load_waits("farm") == []
    modes = {r["fairy_id"]: r["mode"] for r in await store.load_fairies("farm")}
    assert set(modes.values()) == {"idling"}


async def test_resume_reverts_any_half_sent_verb_exactly(database: Database) -> None:
    """Not only creates: a half-sent move and a half-sent delete are undone exactly."""
    store = FairyStore(database.pool)
    browser = MemoryRoom(outbox=Outbox(database.pool))
    await browser.outbox.ensure_room("yard", "relay")  # type: ignore[union-attr]
    dead = MemorySession(browser, room_id="yard", fairy="fairy-2", session_id="dead-1")
    box = {"id": "box", "type": "geo", "x": 100, "y": 100, "props": {"w": 50, "h": 50}}
    dot = {"id": "dot", "type": "geo", "x": 300, "y": 100, "props": {"w": 10, "h": 10}}
    await dead.send_actions([WireAction(id="a1", name="create_shape", params=box)])
    await dead.send_actions([WireAction(id="a2", name="create_shape", params=dot)])
    original = copy.deepcopy(browser.canvas.shapes)
    move = {"id": "box", "x": 700, "y": 400}
    await dead.send_actions([WireAction(id="a3", name="update_shape", params=move)], partial=True)
    gone = {"ids": ["dot"]}
    await dead.send_actions([WireAction(id="a4", name="delete_shape", params=gone)], partial=True)
    assert browser.canvas.shapes["box"]["x"] == 700 and "dot" not in browser.canvas.shapes

    runtime = FairyRuntime(store=store, sessions=MemorySessions(browser))
    room = await runtime.room("yard")
    now = MemorySession(browser, room_id="yard", fairy="fairy-2")
    await withdraw_in_flight(runtime.deps, room, "fairy-2", now, "dead-1")

    assert browser.canvas.shapes == original
    assert not browser.canvas.in_flight()
    # The finals went out in the dead session itself, continuing its seq.
    sid, seq, partial, acts = browser.sent[-1]
    assert (sid, seq, partial) == ("dead-1", 5, False)
    assert sorted(a.id for a in acts) == ["a3", "a4"]
    assert await store.in_flight_partials("dead-1") == []


# A crash can fall between two writes of one step; each case is the board such a crash leaves.
CRASHED_BOARDS = {
    # A drone was directed (its task saved in progress) but its request was never queued,
    # while the lead's turn that directed it was still running.
    "directed, drone never started": (("in-progress", "todo"), "working-drone", "running", []),
    # The last task was marked done but the wake of the waiting lead was never queued.
    "done, wake never queued": (("done", "done"), "standing-by", None, ["part-2"]),
    # The lead sits waiting on nothing while a task is still todo (no one works it).
    "lead waiting, a task todo": (("done", "todo"), "standing-by", None, []),
}


@pytest.mark.parametrize("case", list(CRASHED_BOARDS))
async def test_a_project_interrupted_between_two_writes_still_finishes(
    database: Database, start_fake_anthropic: StartFake, case: str
) -> None:
    statuses, drone_mode, lead_request, awaited = CRASHED_BOARDS[case]
    store = FairyStore(database.pool)
    browser = MemoryRoom(outbox=Outbox(database.pool))
    room_id = "orchard"
    await browser.outbox.ensure_room(room_id, "relay")  # type: ignore[union-attr]
    first = FairyRuntime(store=store, sessions=MemorySessions(browser))
    room = await first.room(room_id)  # the default crew, saved
    board = room.board
    board.start_project(
        "fairy-1",
        title="Orchard",
        description="trees",
        plan="two parts",
        members=["fairy-2", "fairy-3"],
        project_id="p1",
    )
    for i, (status, drone) in enumerate(zip(statuses, ("fairy-2", "fairy-3"), strict=True)):
        board.create_project_task(
            "fairy-1",
            title=f"Part {i + 1}",
            text="Draw one labelled box.",
            bounds=Box(40 + 400 * i, 40, 360, 300),
            assignee=drone,
            task_id=f"part-{i + 1}",
        )
        if status != "todo":
            board.direct("fairy-1", f"part-{i + 1}")
        if status == "done":
            board.mark_done(drone)
    for obj in board.pending:
        if isinstance(obj, Task):
            await store.save_task(task_row(obj))
        else:
            await store.save_project(project_row(obj))
    room.roster.update("fairy-2", mode=drone_mode)
    lead_mode = "orchestrating-active" if lead_request else "orchestrating-waiting"
    room.roster.update("fairy-1", mode=lead_mode)
    for fid in ("fairy-1", "fairy-2"):
        await store.save_fairy(room_id, fairy_row(room.roster.get(fid), 0))
    await store.add_waits(
        room_id,
        [
            {"agent_id": "fairy-1", "key": task_completed_key(t), "message": f"{t} is done."}
            for t in awaited
        ],
    )
    if lead_request is not None:
        rid = await store.enqueue(room_id, "fairy-1", "project: draw an orchard", "user")
        await store.set_request(rid, lead_request, "dead-lead")

    # A new steward over the same Postgres, its fairies on the real `anthropic:` provider.
    fake = await start_fake_anthropic(responder=PlanResponder(seed=5))
    settings = Settings(
        anthropic_base_url=f"http://127.0.0.1:{fake.port}",
        steward_model="anthropic:claude-fairy-test",
    )
    second = FairyRuntime(
        store=store, sessions=MemorySessions(browser), models=models_from_settings(settings)
    )
    await second.resume(room_id)
    resumed = second.rooms[room_id]
    await asyncio.wait_for(second.wait_settled(resumed), 60)
    tasks = {t.id: t.status for t in resumed.board.project_tasks("p1")}
    assert tasks == {"part-1": "done", "part-2": "done"}, (case, tasks)
    assert resumed.board.projects["p1"].status == "done", case
    (row,) = await store.load_projects(room_id)
    assert row["status"] == "done"
    assert await store.open_requests(room_id) == []
    # Nothing is left to wake the lead for a finished project, in memory or after a restart.
    assert resumed.waits.conditions == [], case
    assert await store.load_waits(room_id) == []
