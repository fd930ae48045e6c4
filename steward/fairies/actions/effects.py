"""What each fairy action does, as pure functions of the room's fairy state.

A handler checks the rules (through `ProjectBoard`, which raises `FairyMistake`), changes
the board, and returns `Effect`s for the runtime to carry out: interrupt a fairy (switch
its mode, give it input), wait, notify waiters, add memory-transition items, end the turn.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from steward.canvas.bounds import Rect
from steward.fairies.memory import HistoryItem, MemoryLevel, project_end_items, task_end_items
from steward.fairies.mistakes import FairyMistake
from steward.fairies.modes import ModeName
from steward.fairies.projects import ProjectBoard, ProjectKind, task_completed_key
from steward.fairies.roster import Roster
from steward.fairies.tasks import Task, task_bounds


@dataclass(frozen=True)
class SwitchFairy:
    """Interrupt `fairy_id`: switch its mode and (optionally) give it new input."""

    fairy_id: str
    mode: ModeName
    input: str | None = None


@dataclass(frozen=True)
class WaitFor:
    fairy_id: str
    keys: list[tuple[str, str]]  # (key, message on wake)


@dataclass(frozen=True)
class Notify:
    key: str


@dataclass(frozen=True)
class Remember:
    fairy_id: str
    items: list[HistoryItem]


@dataclass(frozen=True)
class Moved:
    fairy_id: str


@dataclass(frozen=True)
class Review:
    """Nothing left to wait for: the fairy reviews next (unless a wake is already queued)."""

    fairy_id: str
    message: str


Effect = SwitchFairy | WaitFor | Notify | Remember | Moved | Review


@dataclass
class EffectContext:
    room_id: str
    fairy_id: str
    board: ProjectBoard
    roster: Roster
    effects: list[Effect] = field(default_factory=list)
    end_turn: bool = False
    origin: tuple[float, float] = (0.0, 0.0)  # of the model's coordinates (briefs use them)


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
    return task_bounds(_num(data, "x"), _num(data, "y"), _num(data, "w"), _num(data, "h"))


def drone_brief(task: Task, orchestrator: str, origin: tuple[float, float] = (0.0, 0.0)) -> str:
    b = task.bounds
    where = ""
    if b is not None:
        x, y = b.x - origin[0], b.y - origin[1]
        where = f" Your area is x={x:g}, y={y:g}, w={b.w:g}, h={b.h:g}."
    return (
        f'{orchestrator} asked you to do task "{task.id}": {task.title}. {task.text}{where}'
        " Work only inside your area, then use mark-my-task-done."
    )


def _start_project(c: EffectContext, data: dict[str, Any], kind: ProjectKind) -> None:
    fairy = c.roster.get(c.fairy_id)
    members = [
        f.id
        for f in c.roster.fairies.values()
        if f.id != c.fairy_id and f.role == "drone" and c.board.active_project_of(f.id) is None
    ]
    c.board.start_project(
        fairy.id,
        title=_s(data, "title", "Project"),
        description=_s(data, "description"),
        plan=_s(data, "plan"),
        members=members,
        kind=kind,
    )


def _create_task(c: EffectContext, data: dict[str, Any]) -> None:
    assignee = data.get("assignee")
    c.board.create_project_task(
        c.fairy_id,
        title=_s(data, "title"),
        text=_s(data, "text"),
        bounds=_area(data),
        assignee=assignee if isinstance(assignee, str) and assignee else None,
        task_id=_s(data, "taskId") or None,
    )


def _delete_task(c: EffectContext, data: dict[str, Any]) -> None:
    c.board.delete_project_task(c.fairy_id, _s(data, "taskId"))


def _direct(c: EffectContext, data: dict[str, Any]) -> None:
    to = data.get("fairyId")
    task = c.board.direct(c.fairy_id, _s(data, "taskId"), to if isinstance(to, str) else None)
    assert task.assigned_to is not None
    c.effects.append(
        SwitchFairy(task.assigned_to, "working-drone", drone_brief(task, c.fairy_id, c.origin))
    )


def _await(c: EffectContext, data: dict[str, Any], waiting: ModeName) -> None:
    ids = data.get("taskIds")
    ids = [i for i in ids if isinstance(i, str)] if isinstance(ids, list) else []
    keys = c.board.awaitable(c.fairy_id, ids)
    if not keys:
        # Every named task finished while the model was answering: review, do not wait.
        c.effects.append(
            Review(c.fairy_id, "The tasks you wanted to await are already done: "
                   + ", ".join(ids) + ". Review them, then start more tasks or end the project.")
        )  # fmt: skip
        c.end_turn = True
        return
    msgs = []
    for key in keys:
        task = c.board.tasks[key.split(":", 1)[1]]
        msgs.append(
            (key, f'Task "{task.id}" ({task.title}) by {task.assigned_to} is done. Review it.')
        )
    c.effects.append(WaitFor(c.fairy_id, msgs))
    c.effects.append(SwitchFairy(c.fairy_id, waiting))
    c.end_turn = True


def _end_project(c: EffectContext) -> None:
    project = c.board.end_project(c.fairy_id)
    c.effects.append(
        Remember(c.fairy_id, project_end_items(project.title, list(project.members), led=True))
    )
    for m in project.members:
        c.effects.append(Remember(m, project_end_items(project.title, [], led=False)))
        c.effects.append(SwitchFairy(m, "idling"))
    c.effects.append(SwitchFairy(c.fairy_id, "idling"))
    c.end_turn = True


def _abort_project(c: EffectContext) -> None:
    project = c.board.active_project_of(c.fairy_id)
    if project is None or project.orchestrator != c.fairy_id:
        raise FairyMistake("You are not leading a project.")
    abort_effects(c, project.id)
    c.end_turn = True


def abort_effects(c: EffectContext, project_id: str) -> None:
    """Abort or disband (also used by the system): every member goes back to idling."""
    project, _ = c.board.abort_project(project_id)
    for m in (project.orchestrator, *project.members):
        c.effects.append(SwitchFairy(m, "idling"))


def _mark_done(c: EffectContext, back: ModeName, level: MemoryLevel) -> None:
    task = c.board.mark_done(c.fairy_id)
    c.effects.append(
        Remember(c.fairy_id, task_end_items(task.id, task.title, task.text, level=level))
    )
    c.effects.append(Notify(task_completed_key(task.id)))
    c.effects.append(SwitchFairy(c.fairy_id, back))
    c.end_turn = True


def _start_own(c: EffectContext, data: dict[str, Any], working: ModeName) -> None:
    task = c.board.start_own_task(c.fairy_id, _s(data, "taskId"))
    c.effects.append(
        SwitchFairy(c.fairy_id, working, f'Work on your task "{task.id}": {task.text}')
    )
    c.end_turn = True


def _create_solo(c: EffectContext, data: dict[str, Any]) -> None:
    area = _area(data) if all(data.get(k) is not None for k in "xywh") else None
    c.board.create_solo_task(
        c.fairy_id,
        title=_s(data, "title"),
        text=_s(data, "text"),
        bounds=area,
        task_id=_s(data, "taskId") or None,
    )


def _fly(c: EffectContext, data: dict[str, Any]) -> None:
    c.roster.fly_to(c.fairy_id, _area(data))
    c.effects.append(Moved(c.fairy_id))


Handler = Callable[[EffectContext, dict[str, Any]], None]

HANDLERS: dict[str, Handler] = {
    "create-task": _create_solo,
    "start-task": lambda c, d: _start_own(c, d, "working-solo"),
    "mark-task-done": lambda c, d: _mark_done(c, "soloing", "fairy"),
    "start-project": lambda c, d: _start_project(c, d, "orchestrated"),
    "create-project-task": _create_task,
    "delete-project-task": _delete_task,
    "direct-to-start-project-task": _direct,
    "await-tasks-completion": lambda c, d: _await(c, d, "orchestrating-waiting"),
    "end-project": lambda c, d: _end_project(c),
    "abort-project": lambda c, d: _abort_project(c),
    "start-duo-project": lambda c, d: _start_project(c, d, "duo"),
    "create-duo-task": _create_task,
    "direct-to-start-duo-task": _direct,
    "start-duo-task": lambda c, d: _start_own(c, d, "working-orchestrator"),
    "mark-duo-task-done": lambda c, d: _mark_done(c, "duo-orchestrating-active", "project"),
    "await-duo-tasks-completion": lambda c, d: _await(c, d, "duo-orchestrating-waiting"),
    "end-duo-project": lambda c, d: _end_project(c),
    "abort-duo-project": lambda c, d: _abort_project(c),
    "mark-my-task-done": lambda c, d: _mark_done(c, "standing-by", "project"),
    "fly-to-bounds": _fly,
}


def apply_fairy_action(c: EffectContext, name: str, data: dict[str, Any]) -> None:
    """Run one fairy action; raises FairyMistake (board unchanged for that action)."""
    HANDLERS[name](c, data)
