"""Projects, tasks, waits and the roster: the rules the fairy actions rely on."""

from __future__ import annotations

import pytest

from steward.actions.mistakes import FairyMistake
from steward.fairies.project_task import Task
from steward.fairies.projects import ProjectBoard
from steward.fairies.roster import Roster
from steward.fairies.waits import WaitBoard, mode_transition_key
from steward.protocol.box import Box

AREA = Box(0, 0, 400, 300)


def _project() -> tuple[ProjectBoard, str]:
    board = ProjectBoard("r")
    p = board.start_project("o", title="Farm", description="", plan="2 tasks", members=["a", "b"])
    return board, p.id


def test_project_flow() -> None:
    board, _ = _project()
    t1 = board.create_project_task("o", title="Barn", text="", bounds=AREA, assignee="a")
    t2 = board.create_project_task("o", title="Sun", text="", bounds=AREA, assignee="b")
    assert board.direct("o", t1.id).status == "in-progress"
    assert board.direct("o", t2.id).assigned_to == "b"
    keys = board.awaitable("o", [t1.id, t2.id])
    assert keys == [f"task-completed:{t1.id}", f"task-completed:{t2.id}"]
    with pytest.raises(FairyMistake, match="still in progress"):
        board.end_project("o")
    board.mark_done("a")
    board.mark_done("b", t2.id)
    assert board.end_project("o").status == "done"
    changed, deleted = board.drain()
    assert len(changed) == 8 and deleted == []


@pytest.mark.parametrize(
    ("call", "needle"),
    [
        (lambda b, t: b.direct("o", "nope", "a"), 'no task "nope"'),
        (lambda b, t: b.direct("o", t, "o"), "cannot direct yourself"),
        (lambda b, t: b.direct("o", t, "stranger"), "not in this project"),
        (
            lambda b, t: b.create_project_task("o", title="x", text="", bounds=AREA, assignee="z"),
            "not in this project",
        ),
        (
            lambda b, t: b.create_project_task("o", title="x", text="", bounds=AREA, assignee="o"),
            "cannot assign a task to yourself",
        ),
        (lambda b, t: b.mark_done("a"), "not working on a task"),
        (
            lambda b, t: b.create_project_task("a", title="x", text="", bounds=AREA, assignee="b"),
            "not leading a project",
        ),
        (lambda b, t: b.awaitable("o", [t]), "has not started"),
    ],
)
def test_semantic_mistakes_become_feedback(call: object, needle: str) -> None:
    board, _ = _project()
    t = board.create_project_task("o", title="Barn", text="", bounds=AREA, assignee="a")
    with pytest.raises(FairyMistake, match=needle):
        call(board, t.id)  # type: ignore[operator]


def test_a_wait_with_nothing_in_progress_is_refused_with_the_task_list() -> None:
    board, _ = _project()
    t1 = board.create_project_task("o", title="Barn", text="", bounds=AREA, assignee="a")
    t2 = board.create_project_task("o", title="Sun", text="", bounds=AREA, assignee="b")
    board.direct("o", t1.id)
    board.mark_done("a")
    with pytest.raises(FairyMistake) as refused:
        board.awaitable("o", [])
    said = refused.value.feedback
    assert "nothing would wake you" in said
    assert f"{t1.id} done (a); {t2.id} todo (b)" in said


def test_abort_releases_running_tasks_and_delete() -> None:
    board, pid = _project()
    t = board.create_project_task("o", title="Barn", text="", bounds=AREA, assignee="a")
    t2 = board.create_project_task("o", title="Sun", text="", bounds=AREA, assignee="b")
    board.delete_project_task("o", t2.id)
    assert t2.id not in board.tasks
    board.direct("o", t.id)
    with pytest.raises(FairyMistake, match="in progress"):
        board.delete_project_task("o", t.id)
    aborted, released = board.abort_project(pid)
    assert aborted.status == "aborted" and [r.status for r in released] == ["todo"]
    assert board.active_project_of("a") is None
    _, deleted = board.drain()
    assert deleted == [t2.id]


def test_duo_and_solo_tasks() -> None:
    board = ProjectBoard("r")
    board.start_project("o", title="Duo", description="", plan="", members=["p"], kind="duo")
    mine = board.create_project_task("o", title="left", text="", bounds=AREA, assignee="o")
    assert board.start_own_task("o", mine.id).assigned_to == "o"
    solo = board.create_solo_task("s", title="tree", text="", bounds=None)
    board.start_own_task("s", solo.id)
    with pytest.raises(FairyMistake, match="still working"):
        board.start_own_task("s", board.create_solo_task("s", title="b", text="", bounds=None).id)
    assert board.mark_done("s").status == "done"


def test_task_status_only_moves_forward() -> None:
    t = Task("t", "r", "x", "")
    with pytest.raises(FairyMistake):
        t.moved_to("done").moved_to("todo")


def test_waits_wake_once_and_delivery_rule() -> None:
    waits = WaitBoard()
    waits.wait("o", [("task-completed:t1", "t1 done"), ("task-completed:t2", "t2 done")])
    waits.wait("o", [("task-completed:t1", "dup")])
    assert len(waits.waiting_on("o")) == 2
    assert [w.message for w in waits.notify("task-completed:t1")] == ["t1 done"]
    assert waits.notify("task-completed:t1") == []
    key = mode_transition_key("a", "standing-by")
    waits.wait("x", [(key, "a stands by")])
    assert [w.fairy_id for w in waits.notify(key)] == ["x"]
    assert len(waits.clear("o")) == 1 and waits.conditions == []


def test_roster_limits_and_presence() -> None:
    roster = Roster()
    for i in range(10):
        roster.add(f"f{i}")
    with pytest.raises(FairyMistake, match="at most 10"):
        roster.add("f10")
    roster.update("f1", mode="working-drone", task_bounds=AREA)
    roster.fly_to("f1", AREA)
    msg = roster.message(now=1.0)
    f1 = msg.fairies[1]
    assert f1.mode == "working-drone" and f1.position.x == 200 and f1.task_bounds is not None
    assert len({f.color for f in msg.fairies}) == 10
