"""A drone whose task meets other tasks of its project that have started or finished (next
to it, overlapping it, or the same area) is told how each meets it and to draw one picture
with them where they are one (one scale, parts lined up where they meet, worded for a view
from the side and a plan from above alike) or keep clear of another drawing; a task far along
the same row, a neighbour that has not started, or none, gets no such advice."""

from __future__ import annotations

from dataclasses import replace

from steward.fairies.modes import mode
from steward.fairies.project_task import Task
from steward.fairies.projects import Project
from steward.fairies.prompt_parts import FairyView, brief, meeting
from steward.fairies.roster import Fairy
from steward.protocol.box import Box

PROJECT = Project("p", "room", "Farm", "a farm", "2x2", "project", "fairy-1", ("fairy-2",))
BARN = Task(
    "barn", "room", "The barn", "a barn", "in-progress", "p", "fairy-2", Box(0, 0, 400, 300)
)
HOUSE = Task("house", "room", "The farmhouse", "a house", "todo", "p", None, Box(420, 20, 300, 300))
POND = Task("pond", "room", "The pond", "a pond", "todo", "p", None, Box(0, 340, 400, 300))


def _tasks_lines(tasks: list[Task]) -> tuple[str, ...]:
    view = FairyView(
        fairy=Fairy("fairy-2", "Pip", "blue", role="drone", mode="working-drone"),
        mode=mode("working-drone"),
        others=[],
        project=PROJECT,
        project_tasks=tasks,
        task=BARN,
        own_tasks=[],
        history=[],
        shapes={},
        viewport=Box(0, 0, 400, 300),
    )
    return brief(view).tasks


def test_how_a_task_meets_another_is_said_and_far_ones_do_not_meet() -> None:
    assert BARN.bounds is not None and HOUSE.bounds and POND.bounds
    assert meeting(BARN.bounds, HOUSE.bounds) == "next to yours, on the right"  # 20 px apart
    assert meeting(BARN.bounds, POND.bounds) == "next to yours, below"  # 40 px below
    assert meeting(BARN.bounds, Box(100, 250, 600, 100)) == "overlapping yours"  # a ground
    assert meeting(BARN.bounds, BARN.bounds) == "the same area as yours"  # a fix task
    assert meeting(BARN.bounds, Box(2000, 0, 400, 300)) is None  # far along the same row


def test_a_drone_with_a_started_task_beside_it_is_told_to_share_scale_and_lines() -> None:
    started = replace(HOUSE, status="in-progress")
    lines = _tasks_lines([BARN, started, POND])
    (hint,) = [ln for ln in lines if ln.startswith("Tasks that meet yours")]
    assert '"The farmhouse" (house, in-progress), next to yours, on the right' in hint
    assert "pond" not in hint  # not started: nothing to line up with
    assert "keep their scale" in hint
    # Worded for both: the ground line of a side view, the walls and paths of a plan.
    assert "the same ground line in a view from the side" in hint
    assert "the same walls, paths and edges in a plan from above" in hint
    done = _tasks_lines([BARN, replace(HOUSE, status="done")])
    assert any('"The farmhouse" (house, done)' in ln for ln in done)


def test_no_advice_about_a_neighbour_that_has_not_started() -> None:
    assert HOUSE.status == "todo"
    assert not any("meet yours" in ln for ln in _tasks_lines([BARN, HOUSE, POND]))
    assert not any("meet yours" in ln for ln in _tasks_lines([BARN, POND]))


def test_a_ground_under_the_task_and_the_task_it_fixes_are_named_a_far_one_is_not() -> None:
    """The by-hand harbour: the shops were told of the lighthouse far along the row and not
    of the ground they stand on; a fix task was not told of the finished task in its area."""
    ground = Task("ground", "room", "Ground", "quay", "done", "p", "f3", Box(-50, 250, 900, 90))
    earlier = replace(BARN, id="barn-first", title="First barn", status="done")
    far = Task("tower", "room", "Lighthouse", "tower", "done", "p", "f4", Box(3000, 0, 200, 300))
    (hint,) = [
        ln for ln in _tasks_lines([BARN, ground, earlier, far]) if ln.startswith("Tasks that")
    ]
    assert '"Ground" (ground, done), overlapping yours' in hint
    assert '"First barn" (barn-first, done), the same area as yours' in hint
    assert "Lighthouse" not in hint
    assert "keep clear of it" in hint  # another drawing beside it is not one picture
