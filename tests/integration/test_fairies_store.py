"""Fairy state round-trips through the real Postgres (fixture `database`)."""

from __future__ import annotations

import json

import pytest

from steward.fairies.memory import action_item, filter_history, prompt_item, task_end_items
from steward.fairies.persistence import (
    fairy_from,
    fairy_row,
    history_from,
    history_row,
    project_from,
    project_row,
    task_from,
    task_row,
    wait_from,
    wait_row,
)
from steward.fairies.projects import ProjectBoard, Task
from steward.fairies.roster import Roster
from steward.fairies.waits import WaitBoard
from steward.protocol.box import Box
from steward.store.database import Database
from steward.store.fairies import FairyStore
from steward.store.outbox import Outbox

pytestmark = pytest.mark.integration


async def test_roster_history_and_todos_round_trip(database: Database) -> None:
    store = FairyStore(database.pool)
    roster = Roster()
    f = roster.add("o", role="orchestrator", personality="calm")
    f = roster.update("o", mode="orchestrating-waiting", task_bounds=Box(1, 2, 3, 4))
    await store.save_fairy("r", fairy_row(f, 2))
    await store.save_fairy("r", fairy_row(f, 2))  # idempotent
    (row,) = await store.load_fairies("r")
    assert fairy_from(row) == (f, 2)

    items = [prompt_item("draw a farm", "fairy", "user"), prompt_item("plan", "project", "self")]
    items += [action_item("create", {"shape": {"x": 1}}, "task")]
    items += task_end_items("t1", "Barn", "a red barn", level="project")
    await store.append_history("r", "o", [history_row(i) for i in items])
    await store.append_history("r", "o", [history_row(items[0])])  # replay: nothing new
    loaded = [history_from(r) for r in await store.load_history("r", "o")]
    assert loaded == items
    assert filter_history(loaded, "project") == filter_history(items, "project")

    await store.save_todos("r", "o", [{"id": 1, "text": "a", "status": "done"}])
    await store.save_todos("r", "o", [{"id": 2, "text": "b", "status": "todo"}])
    assert await store.load_todos("r", "o") == [{"id": 2, "text": "b", "status": "todo"}]


async def test_board_waits_and_requests_round_trip(database: Database) -> None:
    store = FairyStore(database.pool)
    board = ProjectBoard("r")
    board.start_project("o", title="Farm", description="d", plan="p", members=["a", "b"])
    area = Box(0, 0, 300, 200)
    t1 = board.create_project_task("o", title="Barn", text="x", bounds=area, assignee="a")
    t2 = board.create_project_task("o", title="Sun", text="y", bounds=area, assignee="b")
    board.direct("o", t1.id)
    board.delete_project_task("o", t2.id)
    changed, deleted = board.drain()
    for obj in changed:
        if isinstance(obj, Task):
            await store.save_task(task_row(obj))
        else:
            await store.save_project(project_row(obj))
    for tid in deleted:
        await store.delete_task(tid)
    again = ProjectBoard("r")
    again.load(
        [project_from(r) for r in await store.load_projects("r")],
        [task_from(r) for r in await store.load_tasks("r")],
    )
    assert again.projects == board.projects and again.tasks == board.tasks
    assert again.working_task_of("a") == board.tasks[t1.id]

    waits = WaitBoard()
    added = waits.wait("o", [(f"task-completed:{t1.id}", "Barn done")])
    await store.add_waits("r", [wait_row(w) for w in added])
    loaded = [wait_from(r) for r in await store.load_waits("r")]
    assert loaded == waits.conditions
    await store.remove_waits("r", f"task-completed:{t1.id}")
    assert await store.load_waits("r") == []
    # A whole-set save replaces what is stored: dropped rows go, kept ones stay once.
    both = [wait_row(w) for w in waits.conditions] + [
        {"agent_id": "o", "key": "task-completed:other", "message": "Other done"}
    ]
    await store.save_waits("r", both)
    await store.save_waits("r", both[1:])
    assert [r["key"] for r in await store.load_waits("r")] == ["task-completed:other"]
    await store.save_waits("r", [])
    assert await store.load_waits("r") == []

    rid = await store.enqueue("r", "o", "draw a farm", "user")
    rid2 = await store.enqueue("r", "a", "do the barn", "system")
    await store.set_request(rid, "running", "s-1")
    await store.set_request(rid2, "done")
    (open_row,) = await store.open_requests("r")
    assert open_row["request_id"] == rid and open_row["state"] == "running"
    assert open_row["session_id"] == "s-1"


async def test_in_flight_partials_from_the_outbox(database: Database) -> None:
    outbox = Outbox(database.pool)
    await outbox.ensure_room("r", "relay")

    def env(seq: int, partial: bool, *ids: str) -> str:
        acts = [{"id": i, "name": "create_shape", "params": {"id": f"s-{i}"}} for i in ids]
        return json.dumps({"sessionId": "s", "seq": seq, "actions": acts, "ts": 0})

    await outbox.append("r", "s", 1, 1, True, env(1, True, "a"))
    await outbox.append("r", "s", 2, 2, False, env(2, False, "a"))
    await outbox.append("r", "s", 3, 3, True, env(3, True, "b"))
    store = FairyStore(database.pool)
    assert [a["id"] for a in await store.in_flight_partials("s")] == ["b"]
