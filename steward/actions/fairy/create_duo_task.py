"""`create-duo-task`: create a task for yourself or your partner."""

from __future__ import annotations

from steward.actions.fairy.guides import TASK_AREAS
from steward.actions.fairy.projects import create_project_task
from steward.actions.fairy.schemas import ProjectTask
from steward.actions.fairy.spec import fairy_spec

CREATE_DUO_TASK = fairy_spec(
    "create-duo-task",
    schema=ProjectTask,
    description="Create a task for yourself or your partner.",
    guide=TASK_AREAS,
    effect=create_project_task,
    plans=True,
)
