"""The fairy actions (family `fairy`): projects, tasks, waiting, flying.

They sit in the one action registry like every other action and never change the canvas (no
wire ops). Each is whole here: its schema, its section of the system prompt, its sanitize and
its effect, which checks the board's rules and asks the acting fairy to react, through the
agent's interface (`steward/actions/agent.py`, implemented by the fairy runtime). Only the
modes that list them offer them, so a plain canvas agent never sees them.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from steward.actions.agent import ActionEffect, FairyAgent, ModeName, ProjectKind, TaskView
from steward.actions.base import ActionModel, ActionSpec, RunState, WireOp
from steward.actions.mistakes import FairyMistake
from steward.canvas.bounds import Rect

# Smallest sensible task area: a model asking for less gets this much.
MIN_TASK_SIDE = 50.0


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
    name: str,
    schema: type[ActionModel],
    description: str,
    guide: str,
    effect: ActionEffect,
    *,
    plans: bool = False,
) -> ActionSpec:
    return ActionSpec(
        name,
        family="fairy",
        kind="fairy",
        schema=schema,
        description=description,
        guide=guide,
        sanitize=_complete_only,
        resolve=_no_ops,
        effect=effect,
        plans=plans,
    )


# -- effects -----------------------------------------------------------------------------


def _s(data: dict[str, Any], key: str, default: str = "") -> str:
    v = data.get(key)
    return v.strip()[:2000] if isinstance(v, str) else default


def _num(data: dict[str, Any], key: str) -> float:
    v = data.get(key)
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        raise FairyMistake(f'"{key}" must be a number.')
    try:
        return float(v)
    except ValueError as e:
        raise FairyMistake(f'"{key}" must be a number.') from e


def _area(data: dict[str, Any]) -> Rect:
    """A task's or flight's area, made sane (positive, not tiny)."""
    x, y, w, h = (_num(data, key) for key in "xywh")
    return Rect(x, y, max(w, MIN_TASK_SIDE), max(h, MIN_TASK_SIDE))


def drone_brief(task: TaskView, orchestrator: str, origin: tuple[float, float] = (0.0, 0.0)) -> str:
    """The prompt a directed fairy starts its task with (area in the model's coordinates)."""
    b = task.bounds
    where = ""
    if b is not None:
        x, y = b.x - origin[0], b.y - origin[1]
        where = f" Your area is x={x:g}, y={y:g}, w={b.w:g}, h={b.h:g}."
    return (
        f'{orchestrator} asked you to do task "{task.id}": {task.title}. {task.text}{where}'
        " Work only inside your area, then use mark-my-task-done."
    )


def _create_solo_task(agent: FairyAgent, data: dict[str, Any]) -> None:
    area = _area(data) if all(data.get(k) is not None for k in "xywh") else None
    agent.board.create_solo_task(
        agent.fairy_id,
        title=_s(data, "title"),
        text=_s(data, "text"),
        bounds=area,
        task_id=_s(data, "taskId") or None,
    )


def _start_own_task(working: ModeName) -> ActionEffect:
    def effect(agent: FairyAgent, data: dict[str, Any]) -> None:
        task = agent.board.start_own_task(agent.fairy_id, _s(data, "taskId"))
        agent.switch_mode(working, f'Work on your task "{task.id}": {task.text}')
        agent.end_turn()

    return effect


def _mark_done(back: ModeName) -> ActionEffect:
    def effect(agent: FairyAgent, data: dict[str, Any]) -> None:
        task = agent.board.mark_done(agent.fairy_id)
        agent.remember_task_end(task, back)
        agent.notify_task_done(task.id)
        agent.switch_mode(back)
        agent.end_turn()

    return effect


def _start_project(kind: ProjectKind) -> ActionEffect:
    def effect(agent: FairyAgent, data: dict[str, Any]) -> None:
        agent.board.start_project(
            agent.fairy_id,
            title=_s(data, "title", "Project"),
            description=_s(data, "description"),
            plan=_s(data, "plan"),
            members=agent.free_drones(),
            kind=kind,
        )

    return effect


def _create_project_task(agent: FairyAgent, data: dict[str, Any]) -> None:
    assignee = data.get("assignee")
    agent.board.create_project_task(
        agent.fairy_id,
        title=_s(data, "title"),
        text=_s(data, "text"),
        bounds=_area(data),
        assignee=assignee if isinstance(assignee, str) and assignee else None,
        task_id=_s(data, "taskId") or None,
    )


def _delete_project_task(agent: FairyAgent, data: dict[str, Any]) -> None:
    agent.board.delete_project_task(agent.fairy_id, _s(data, "taskId"))


def _direct(agent: FairyAgent, data: dict[str, Any]) -> None:
    to = data.get("fairyId")
    task = agent.board.direct(
        agent.fairy_id, _s(data, "taskId"), to if isinstance(to, str) else None
    )
    assert task.assigned_to is not None
    brief = drone_brief(task, agent.fairy_id)  # its area in page coordinates
    agent.interrupt(task.assigned_to, "working-drone", brief)


def _await_tasks(waiting: ModeName) -> ActionEffect:
    def effect(agent: FairyAgent, data: dict[str, Any]) -> None:
        ids = data.get("taskIds")
        ids = [i for i in ids if isinstance(i, str)] if isinstance(ids, list) else []
        keys = agent.board.awaitable(agent.fairy_id, ids)
        if not keys:
            # Every named task finished while the model was answering: review, do not wait.
            done = ", ".join(ids)
            agent.review(
                f"The tasks you wanted to await are already done: {done}. "
                "Review them, then start more tasks or end the project."
            )
            agent.end_turn()
            return
        wakes = []
        for key in keys:
            task = agent.board.task(key.split(":", 1)[1])
            wakes.append(
                (key, f'Task "{task.id}" ({task.title}) by {task.assigned_to} is done. Review it.')
            )
        agent.wait(wakes)
        agent.switch_mode(waiting)
        agent.end_turn()

    return effect


def _end_project(agent: FairyAgent, data: dict[str, Any]) -> None:
    project = agent.board.end_project(agent.fairy_id)
    agent.remember_project_end(agent.fairy_id, project)
    for m in project.members:
        agent.remember_project_end(m, project)
        agent.interrupt(m, "idling")
    agent.switch_mode("idling")
    agent.end_turn()


def _abort_project(agent: FairyAgent, data: dict[str, Any]) -> None:
    project = agent.board.active_project_of(agent.fairy_id)
    if project is None or project.orchestrator != agent.fairy_id:
        raise FairyMistake("You are not leading a project.")
    agent.board.abort_project(project.id)
    for m in (project.orchestrator, *project.members):
        if m == agent.fairy_id:
            agent.switch_mode("idling")
        else:
            agent.interrupt(m, "idling")
    agent.end_turn()


def _fly_to(agent: FairyAgent, data: dict[str, Any]) -> None:
    agent.move(_area(data))


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

# solo
CREATE_TASK = _spec(
    "create-task",
    schema=SoloTask,
    description="Create a task for yourself (optionally with an area).",
    guide="""Split the request into tasks for yourself: a short id, a title, what to do, and
optionally the canvas area (x, y, w, h) it covers. Then start the first with `start-task`.""",
    effect=_create_solo_task,
    plans=True,
)

START_TASK = _spec(
    "start-task",
    schema=TaskRef,
    description="Start one of your own tasks; you then work inside its area.",
    guide="""Begin one of your tasks: until it is done you see and edit only inside its
area.""",
    effect=_start_own_task("working-solo"),
)

MARK_TASK_DONE = _spec(
    "mark-task-done",
    schema=Nothing,
    description="Mark your current solo task done.",
    guide=_DONE,
    effect=_mark_done("soloing"),
)

# project (orchestrator)
START_PROJECT = _spec(
    "start-project",
    schema=Project,
    description="Start a project: title, description and a brief plan.",
    guide=_PLAN,
    effect=_start_project("orchestrated"),
    plans=True,
)

CREATE_PROJECT_TASK = _spec(
    "create-project-task",
    schema=ProjectTask,
    description=("Create a task with its canvas area (x, y, w, h) and the member who will do it."),
    guide=_TASK_AREAS,
    effect=_create_project_task,
    plans=True,
)

DELETE_PROJECT_TASK = _spec(
    "delete-project-task",
    schema=TaskRef,
    description="Delete a task that has not started.",
    guide="""Remove a task that has not started, when the plan changes.""",
    effect=_delete_project_task,
)

DIRECT_TO_START_PROJECT_TASK = _spec(
    "direct-to-start-project-task",
    schema=Direct,
    description="Tell a member to start a task now.",
    guide=_DIRECT,
    effect=_direct,
)

AWAIT_TASKS_COMPLETION = _spec(
    "await-tasks-completion",
    schema=Await,
    description="Wait until these tasks are done; you are woken as each one completes.",
    guide=_AWAIT,
    effect=_await_tasks("orchestrating-waiting"),
)

END_PROJECT = _spec(
    "end-project",
    schema=Nothing,
    description="End the project once every task is done and reviewed.",
    guide=_END,
    effect=_end_project,
)

ABORT_PROJECT = _spec(
    "abort-project",
    schema=Nothing,
    description="Abort the project; running tasks stop.",
    guide=_ABORT,
    effect=_abort_project,
)

# duo
START_DUO_PROJECT = _spec(
    "start-duo-project",
    schema=Project,
    description="Start a project with your partner.",
    guide=_PLAN,
    effect=_start_project("duo"),
    plans=True,
)

CREATE_DUO_TASK = _spec(
    "create-duo-task",
    schema=ProjectTask,
    description="Create a task for yourself or your partner.",
    guide=_TASK_AREAS,
    effect=_create_project_task,
    plans=True,
)

DIRECT_TO_START_DUO_TASK = _spec(
    "direct-to-start-duo-task",
    schema=Direct,
    description="Tell your partner to start a task now.",
    guide=_DIRECT,
    effect=_direct,
)

START_DUO_TASK = _spec(
    "start-duo-task",
    schema=TaskRef,
    description="Work one of the duo tasks yourself.",
    guide="""Work one of the project's tasks yourself: until it is done you see and edit
only inside its area.""",
    effect=_start_own_task("working-orchestrator"),
)

MARK_DUO_TASK_DONE = _spec(
    "mark-duo-task-done",
    schema=Nothing,
    description="Mark the duo task you are working on done.",
    guide=_DONE,
    effect=_mark_done("duo-orchestrating-active"),
)

AWAIT_DUO_TASKS_COMPLETION = _spec(
    "await-duo-tasks-completion",
    schema=Await,
    description="Wait until these duo tasks are done.",
    guide=_AWAIT,
    effect=_await_tasks("duo-orchestrating-waiting"),
)

END_DUO_PROJECT = _spec(
    "end-duo-project",
    schema=Nothing,
    description="End the duo project.",
    guide=_END,
    effect=_end_project,
)

ABORT_DUO_PROJECT = _spec(
    "abort-duo-project",
    schema=Nothing,
    description="Abort the duo project.",
    guide=_ABORT,
    effect=_abort_project,
)

# drone, any
MARK_MY_TASK_DONE = _spec(
    "mark-my-task-done",
    schema=Nothing,
    description="Mark the task you were given done.",
    guide=_DONE,
    effect=_mark_done("standing-by"),
)

FLY_TO_BOUNDS = _spec(
    "fly-to-bounds",
    schema=FlyTo,
    description="Fly to an area of the canvas (others see you move).",
    guide="""Fly to an area of the canvas; the others see you go there. It changes where you
are, not what you may edit.""",
    effect=_fly_to,
)
