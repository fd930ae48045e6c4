"""Schemas and prompt text of the fairy actions, as entries of the agent-core action shape.

They are not put in the global action registry (a plain one-shot agent must not see them);
the fairy runtime offers the ones its mode allows (`fairy_specs`) and handles them itself
(`steward.fairies.actions.effects`).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from steward.actions.base import ActionContext, ActionModel, ActionSpec, WireOp


class Project(ActionModel):
    title: str
    description: str = ""
    plan: str = Field("", description="tasks, where they sit, their order, what runs in parallel")


class ProjectTask(ActionModel):
    taskId: str = Field(description="a short id you choose, e.g. 'barn'")
    title: str
    text: str = Field(description="what to do, in enough detail to work alone")
    x: float
    y: float
    w: float
    h: float
    assignee: str | None = Field(None, description="fairy id of a project member")


class SoloTask(ActionModel):
    taskId: str
    title: str
    text: str
    x: float | None = None
    y: float | None = None
    w: float | None = None
    h: float | None = None


class TaskRef(ActionModel):
    taskId: str


class Direct(ActionModel):
    taskId: str
    fairyId: str | None = Field(None, description="who starts it (default: its assignee)")


class Await(ActionModel):
    taskIds: list[str] = Field(default_factory=list, description="empty: all tasks in progress")


class Nothing(ActionModel):
    reason: str = ""


class FlyTo(ActionModel):
    x: float
    y: float
    w: float
    h: float


def _complete_only(
    data: dict[str, Any], ctx: ActionContext, index: int, complete: bool
) -> dict[str, Any] | None:
    return data if complete else None


def _no_ops(data: dict[str, Any], ctx: ActionContext) -> list[WireOp]:
    return []


def _spec(name: str, schema: type[ActionModel], description: str) -> ActionSpec:
    return ActionSpec(
        name, "fairy", schema, description, f"`{name}`: {description}", _complete_only, _no_ops
    )


SPECS: tuple[ActionSpec, ...] = (
    # solo
    _spec("create-task", SoloTask, "Create a task for yourself (optionally with an area)."),
    _spec("start-task", TaskRef, "Start one of your own tasks; you then work inside its area."),
    _spec("mark-task-done", Nothing, "Mark your current solo task done."),
    # project (orchestrator)
    _spec("start-project", Project, "Start a project: title, description and a brief plan."),
    _spec("create-project-task", ProjectTask,
          "Create a task with its canvas area (x, y, w, h) and the member who will do it."),
    _spec("delete-project-task", TaskRef, "Delete a task that has not started."),
    _spec("direct-to-start-project-task", Direct, "Tell a member to start a task now."),
    _spec("await-tasks-completion", Await,
          "Wait until these tasks are done; you are woken as each one completes."),
    _spec("end-project", Nothing, "End the project once every task is done and reviewed."),
    _spec("abort-project", Nothing, "Abort the project; running tasks stop."),
    # duo
    _spec("start-duo-project", Project, "Start a project with your partner."),
    _spec("create-duo-task", ProjectTask, "Create a task for yourself or your partner."),
    _spec("direct-to-start-duo-task", Direct, "Tell your partner to start a task now."),
    _spec("start-duo-task", TaskRef, "Work one of the duo tasks yourself."),
    _spec("mark-duo-task-done", Nothing, "Mark the duo task you are working on done."),
    _spec("await-duo-tasks-completion", Await, "Wait until these duo tasks are done."),
    _spec("end-duo-project", Nothing, "End the duo project."),
    _spec("abort-duo-project", Nothing, "Abort the duo project."),
    # drone, any
    _spec("mark-my-task-done", Nothing, "Mark the task you were given done."),
    _spec("fly-to-bounds", FlyTo, "Fly to an area of the canvas (others see you move)."),
)  # fmt: skip

FAIRY_SPECS: dict[str, ActionSpec] = {s.name: s for s in SPECS}


def fairy_action_name(raw: Any) -> str | None:
    """The fairy action a model meant (case, `_` and spaces forgiven), or None."""
    if not isinstance(raw, str):
        return None
    key = raw.strip().lower().replace("_", "-").replace(" ", "-")
    return key if key in FAIRY_SPECS else None
