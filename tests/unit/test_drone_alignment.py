"""A drone whose task sits side by side with other tasks of its project that have started or
finished is told to draw one picture with them (one scale, parts lined up where they meet,
worded for a view from the side and a plan from above alike); a neighbour that has not
started, or none, gets no such advice."""

from __future__ import annotations

from dataclasses import replace

from steward.fairies.modes import mode
from steward.fairies.project_task import Task
from steward.fairies.projects import Project
from steward.fairies.prompt_parts import FairyView, beside, brief
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


def test_side_by_side_means_one_row_of_the_plan() -> None:
    assert BARN.bounds is not None and HOUSE.bounds and POND.bounds
    assert beside(BARN.bounds, HOUSE.bounds)  # the same row, next to each other
    assert not beside(BARN.bounds, POND.bounds)  # below it: another row
    assert not beside(BARN.bounds, Box(100, 0, 100, 300))  # inside it: not beside


def test_a_drone_with_a_started_task_beside_it_is_told_to_share_scale_and_lines() -> None:
    started = replace(HOUSE, status="in-progress")
    lines = _tasks_lines([BARN, started, POND])
    (hint,) = [ln for ln in lines if ln.startswith("Tasks side by side")]
    assert '"The farmhouse" (house, in-progress)' in hint and "pond" not in hint
    assert "keep their scale" in hint
    # Worded for both: the ground line of a side view, the walls and paths of a plan.
    assert "the same ground line in a view from the side" in hint
    assert "the same walls, paths and edges in a plan from above" in hint
    done = _tasks_lines([BARN, replace(HOUSE, status="done")])
    assert any('"The farmhouse" (house, done)' in ln for ln in done)


def test_no_advice_about_a_neighbour_that_has_not_started() -> None:
    assert HOUSE.status == "todo"
    assert not any("side by side" in ln for ln in _tasks_lines([BARN, HOUSE, POND]))
    assert not any("side by side" in ln for ln in _tasks_lines([BARN, POND]))
