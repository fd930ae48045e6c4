"""A drone whose task sits side by side with other tasks of its project is told to draw one
scene with them (one ground line, one scale); one with no such neighbour is told nothing."""

from __future__ import annotations

from steward.canvas.bounds import Rect
from steward.fairies.modes import mode
from steward.fairies.project_task import Task
from steward.fairies.projects import Project
from steward.fairies.prompt_parts import FairyView, beside, brief
from steward.fairies.roster import Fairy

PROJECT = Project("p", "room", "Farm", "a farm", "2x2", "project", "fairy-1", ("fairy-2",))
BARN = Task(
    "barn", "room", "The barn", "a barn", "in-progress", "p", "fairy-2", Rect(0, 0, 400, 300)
)
HOUSE = Task(
    "house", "room", "The farmhouse", "a house", "todo", "p", None, Rect(420, 20, 300, 300)
)
POND = Task("pond", "room", "The pond", "a pond", "todo", "p", None, Rect(0, 340, 400, 300))


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
        viewport=Rect(0, 0, 400, 300),
    )
    return brief(view).tasks


def test_side_by_side_means_one_row_of_the_plan() -> None:
    assert BARN.bounds is not None and HOUSE.bounds and POND.bounds
    assert beside(BARN.bounds, HOUSE.bounds)  # the same row, next to each other
    assert not beside(BARN.bounds, POND.bounds)  # below it: another row
    assert not beside(BARN.bounds, Rect(100, 0, 100, 300))  # inside it: not beside


def test_a_drone_with_a_task_beside_it_is_told_to_share_ground_line_and_scale() -> None:
    lines = _tasks_lines([BARN, HOUSE, POND])
    (hint,) = [ln for ln in lines if ln.startswith("Tasks side by side")]
    assert '"The farmhouse" (house)' in hint and "pond" not in hint
    assert "same ground line" in hint and "same scale" in hint
    assert not any("side by side" in ln for ln in _tasks_lines([BARN, POND]))
