"""The fairy actions (family `fairy`): projects, tasks, waiting, flying.

They sit in the one action registry like every other action; they never change the canvas
(no wire ops). Each spec carries its effect on the fairies' board (`ActionSpec.effect`, in
terms of `FairyOps`, which the fairy runtime implements). Only the modes that allow them
offer them, so a plain canvas agent never sees them.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from steward.actions.base import ActionModel, ActionSpec, RunState, WireOp
from steward.actions.effect import ActionEffect


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
    data: dict[str, Any], ctx: RunState, index: int, complete: bool
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


def _no_ops(data: dict[str, Any], ctx: RunState) -> list[WireOp]:
    return []


def _spec(
    name: str, schema: type[ActionModel], description: str, guide: str, effect: ActionEffect
) -> ActionSpec:
    return ActionSpec(
        name,
        family="fairy",
        schema=schema,
        description=description,
        guide=guide,
        sanitize=_complete_only,
        resolve=_no_ops,
        effect=effect,
    )


# System-prompt sections (ActionSpec.guide) shared by the solo, project and duo variants.
_PLAN = """Open the project with a title, a description and a short plan: the tasks, where
each sits on the canvas, their order, which can run side by side, and when later ones
should start. Then create every task of the plan."""

_TASK_AREAS = """Add a task: a short id, a title, what to do in enough detail to be done
alone, its canvas area (x, y, w, h) and who does it.
- Whoever works a task sees and edits only inside its area, so size and place areas for a
  coherent whole: where parts must meet, their areas overlap (a background overlaps the
  objects in front of it); let what goes where decide the areas.
- Tasks whose areas overlap a lot must not run at the same time; a modest overlap is fine."""

_DIRECT = """Start a task now, in the order of your plan; independent tasks can run side by
side. Start a task only after creating it."""

_AWAIT = """Wait for tasks to finish, then end your reply. You are woken as each one
completes: look at the result, add tasks to fix what is wrong, start the next ones."""

_END = """Close the project once every task is done and you have checked that the parts fit
together into one piece of work. Tell the user what was made."""

_ABORT = """Stop the project and its running tasks, only when it cannot or should not be
finished; tell the user why."""

_DONE = """Say your task is finished, once everything it asks for is drawn inside its area
and you have checked it. Do not mark it done before the work is there."""

SPECS: tuple[ActionSpec, ...] = (
    # solo
    _spec(
        "create-task",
        schema=SoloTask,
        description="Create a task for yourself (optionally with an area).",
        guide="""Split the request into tasks for yourself: a short id, a title, what to do, and
optionally the canvas area (x, y, w, h) it covers. Then start the first with `start-task`.""",
        effect=lambda f, d: f.create_solo_task(d),
    ),
    _spec(
        "start-task",
        schema=TaskRef,
        description="Start one of your own tasks; you then work inside its area.",
        guide="""Begin one of your tasks: until it is done you see and edit only inside its
area.""",
        effect=lambda f, d: f.start_own_task(d, "working-solo"),
    ),
    _spec(
        "mark-task-done",
        schema=Nothing,
        description="Mark your current solo task done.",
        guide=_DONE,
        effect=lambda f, d: f.mark_done("soloing", "fairy"),
    ),
    # project (orchestrator)
    _spec(
        "start-project",
        schema=Project,
        description="Start a project: title, description and a brief plan.",
        guide=_PLAN,
        effect=lambda f, d: f.start_project(d, "orchestrated"),
    ),
    _spec(
        "create-project-task",
        schema=ProjectTask,
        description=(
            "Create a task with its canvas area (x, y, w, h) and the member who will do it."
        ),
        guide=_TASK_AREAS,
        effect=lambda f, d: f.create_project_task(d),
    ),
    _spec(
        "delete-project-task",
        schema=TaskRef,
        description="Delete a task that has not started.",
        guide="""Remove a task that has not started, when the plan changes.""",
        effect=lambda f, d: f.delete_project_task(d),
    ),
    _spec(
        "direct-to-start-project-task",
        schema=Direct,
        description="Tell a member to start a task now.",
        guide=_DIRECT,
        effect=lambda f, d: f.direct(d),
    ),
    _spec(
        "await-tasks-completion",
        schema=Await,
        description="Wait until these tasks are done; you are woken as each one completes.",
        guide=_AWAIT,
        effect=lambda f, d: f.await_tasks(d, "orchestrating-waiting"),
    ),
    _spec(
        "end-project",
        schema=Nothing,
        description="End the project once every task is done and reviewed.",
        guide=_END,
        effect=lambda f, d: f.end_project(),
    ),
    _spec(
        "abort-project",
        schema=Nothing,
        description="Abort the project; running tasks stop.",
        guide=_ABORT,
        effect=lambda f, d: f.abort_project(),
    ),
    # duo
    _spec(
        "start-duo-project",
        schema=Project,
        description="Start a project with your partner.",
        guide=_PLAN,
        effect=lambda f, d: f.start_project(d, "duo"),
    ),
    _spec(
        "create-duo-task",
        schema=ProjectTask,
        description="Create a task for yourself or your partner.",
        guide=_TASK_AREAS,
        effect=lambda f, d: f.create_project_task(d),
    ),
    _spec(
        "direct-to-start-duo-task",
        schema=Direct,
        description="Tell your partner to start a task now.",
        guide=_DIRECT,
        effect=lambda f, d: f.direct(d),
    ),
    _spec(
        "start-duo-task",
        schema=TaskRef,
        description="Work one of the duo tasks yourself.",
        guide="""Work one of the project's tasks yourself: until it is done you see and edit
only inside its area.""",
        effect=lambda f, d: f.start_own_task(d, "working-orchestrator"),
    ),
    _spec(
        "mark-duo-task-done",
        schema=Nothing,
        description="Mark the duo task you are working on done.",
        guide=_DONE,
        effect=lambda f, d: f.mark_done("duo-orchestrating-active", "project"),
    ),
    _spec(
        "await-duo-tasks-completion",
        schema=Await,
        description="Wait until these duo tasks are done.",
        guide=_AWAIT,
        effect=lambda f, d: f.await_tasks(d, "duo-orchestrating-waiting"),
    ),
    _spec(
        "end-duo-project",
        schema=Nothing,
        description="End the duo project.",
        guide=_END,
        effect=lambda f, d: f.end_project(),
    ),
    _spec(
        "abort-duo-project",
        schema=Nothing,
        description="Abort the duo project.",
        guide=_ABORT,
        effect=lambda f, d: f.abort_project(),
    ),
    # drone, any
    _spec(
        "mark-my-task-done",
        schema=Nothing,
        description="Mark the task you were given done.",
        guide=_DONE,
        effect=lambda f, d: f.mark_done("standing-by", "project"),
    ),
    _spec(
        "fly-to-bounds",
        schema=FlyTo,
        description="Fly to an area of the canvas (others see you move).",
        guide="""Fly to an area of the canvas; the others see you go there. It changes where you
are, not what you may edit.""",
        effect=lambda f, d: f.fly_to(d),
    ),
)
