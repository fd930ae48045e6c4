"""The project state message: the whole truth of a project, fitting one packet."""

from __future__ import annotations

from dataclasses import replace

from steward.fairies.project_state import project_state
from steward.fairies.projects import ProjectBoard, task_completed_key
from steward.fairies.waits import WaitCondition, mode_transition_key
from steward.protocol.box import Box
from steward.protocol.limits import MAX_ENVELOPE_BYTES, MAX_PROJECT_TASKS
from steward.protocol.messages import ProjectState


def _board() -> tuple[ProjectBoard, str, list[str]]:
    board = ProjectBoard("r")
    p = board.start_project(
        "lead", title="Farm", description="d", plan="barn then pond", members=["a", "b"]
    )
    t1 = board.create_project_task(
        "lead", title="Barn", text="red", bounds=Box(0, 0, 200, 100), assignee="a"
    )
    t2 = board.create_project_task(
        "lead", title="Pond", text="blue", bounds=Box(300, 0, 200, 100), assignee=None
    )
    return board, p.id, [t1.id, t2.id]


def test_tasks_owners_status_areas_and_waits() -> None:
    board, pid, (t1, t2) = _board()
    waits = [
        WaitCondition("lead", task_completed_key(t1), "barn done"),
        WaitCondition("b", mode_transition_key("a", "standing-by"), "a free"),
        WaitCondition("someone-else", task_completed_key(t2), "not in this project"),
    ]
    msg = project_state(board, board.projects[pid], waits, asker="ann", session_id="s-1", now=5.0)
    assert (msg.title, msg.plan, msg.lead, msg.members, msg.status) == (
        "Farm",
        "barn then pond",
        "lead",
        ["a", "b"],
        "active",
    )
    assert (msg.asker, msg.session_id, msg.ts) == ("ann", "s-1", 5.0)
    assert [(t.id, t.title, t.owner, t.status) for t in msg.tasks] == [
        (t1, "Barn", "a", "todo"),
        (t2, "Pond", None, "todo"),
    ]
    assert msg.tasks[1].area is not None and msg.tasks[1].area.x == 300
    assert [(w.fairy, w.task, w.on_fairy, w.mode) for w in msg.waits] == [
        ("lead", t1, None, None),
        ("b", None, "a", "standing-by"),
    ]
    # What the browser reads back is what was sent.
    assert ProjectState.model_validate_json(msg.to_wire()) == msg


def test_an_ended_project_waits_on_nothing() -> None:
    board, pid, (t1, _) = _board()
    board.projects[pid] = replace(board.projects[pid], status="aborted")
    msg = project_state(
        board, board.projects[pid], [WaitCondition("lead", task_completed_key(t1), "x")]
    )
    assert msg.status == "aborted" and msg.waits == []


def test_a_huge_project_still_fits_one_packet() -> None:
    board = ProjectBoard("r")
    p = board.start_project(
        "lead", title="T" * 500, description="", plan="P" * 10_000, members=["a"]
    )
    for i in range(MAX_PROJECT_TASKS + 7):
        board.create_project_task(
            "lead", title="x" * 400, text="", bounds=Box(i, 0, 1, 1), assignee="a"
        )
    msg = project_state(board, p, [])
    assert len(msg.tasks) == MAX_PROJECT_TASKS
    assert msg.plan.endswith("…\n(and 7 more tasks not shown)") and len(msg.title) == 120
    assert len(msg.to_wire()) < MAX_ENVELOPE_BYTES
    ProjectState.model_validate_json(msg.to_wire())
