"""Tasks: a unit of work with an optional spatial area (bounds) and an assignee.

Status moves forward only: todo → in-progress → done. A task whose drone was released
(project aborted, fairy disbanded) can go back from in-progress to todo.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, replace
from typing import Literal

from steward.actions.mistakes import FairyMistake
from steward.canvas.coords import CoordinateSpace
from steward.protocol.box import Box

TaskStatus = Literal["todo", "in-progress", "done"]

_ALLOWED: dict[TaskStatus, frozenset[TaskStatus]] = {
    "todo": frozenset({"in-progress", "done"}),
    "in-progress": frozenset({"done", "todo"}),
    "done": frozenset(),
}


def new_task_id() -> str:
    return "t" + uuid.uuid4().hex[:8]


@dataclass(frozen=True)
class Task:
    """One task of a room's board: its words, status, project, assignee and area to work in."""

    id: str
    room_id: str
    title: str
    text: str
    status: TaskStatus = "todo"
    project_id: str | None = None
    assigned_to: str | None = None
    bounds: Box | None = None
    created_by: str | None = None

    def moved_to(self, status: TaskStatus) -> Task:
        if status == self.status:
            return self
        if status not in _ALLOWED[self.status]:
            raise FairyMistake(f'Task "{self.id}" is {self.status}; it cannot become {status}.')
        return replace(self, status=status)

    def describe(self, frame: CoordinateSpace | None = None) -> str:
        """One line for a prompt; bounds in the request's `frame` (offset and rounded)."""
        where = ""
        if self.bounds is not None:
            b = self.bounds
            where = f" bounds=({(frame or CoordinateSpace()).box_text(b.x, b.y, b.w, b.h)})"
        who = f" assigned to {self.assigned_to}" if self.assigned_to else " unassigned"
        return f'[{self.id}] "{self.title}" ({self.status},{who}){where}: {self.text}'
