"""The fairy actions (family `fairy`): projects, tasks, waiting, flying.

They sit in the one action registry like every other action; they never change the canvas
(no wire ops), and their effect on the fairies' board is carried out by the fairy runtime
(`steward.fairies.actions.effects.HANDLERS`, by action name). Only the modes that allow
them offer them, so a plain canvas agent never sees them.
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
    """Complete versions only, areas taken from the model's coordinates to the page's."""
    if not complete:
        return None
    out = dict(data)
    for key, to_page in (("x", ctx.coords.x_from_model), ("y", ctx.coords.y_from_model)):
        v = out.get(key)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            out[key] = to_page(float(v))
    return out


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
