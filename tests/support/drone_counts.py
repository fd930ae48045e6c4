"""What the scripted drones draw for a project's tasks, counted by task, for fairy tests."""

from __future__ import annotations

from collections import Counter

from steward.fairies.projects import ProjectBoard
from steward.model.scripted.project_model import drone_drawing


def planned_per_task(board: ProjectBoard) -> Counter[str]:
    """How many shapes the scripted drones draw for each task of the board, by task id."""
    return Counter(
        {
            t.id: len(drone_drawing({"id": t.id, "title": t.title, "bounds": t.bounds.to_dict()}))
            for t in board.tasks.values()
            if t.bounds is not None
        }
    )


def by_task(ids: list[str]) -> Counter[str]:
    """Shape ids (`<task id>-<n>`, `<task id>-frame`, …) counted by task id."""
    return Counter(i.rsplit("-", 1)[0] for i in ids)
