"""`create-project-task`: a task with its canvas area and the member who will do it."""

from __future__ import annotations

from steward.actions.fairy.guides import TASK_AREAS
from steward.actions.fairy.projects import create_project_task
from steward.actions.fairy.schemas import ProjectTask
from steward.actions.fairy.spec import fairy_spec

CREATE_PROJECT_TASK = fairy_spec(
    "create-project-task",
    schema=ProjectTask,
    description=("Create a task with its canvas area (x, y, w, h) and the member who will do it."),
    guide=TASK_AREAS,
    effect=create_project_task,
    plans=True,
)
