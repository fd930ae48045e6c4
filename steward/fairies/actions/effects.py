"""What fairy actions do to the room's fairy state: `BoardOps` implements `FairyOps`.

Each fairy action's spec (`steward/actions/fairy.py`) names its effect as a call of these
operations. An operation checks the rules (through `ProjectBoard`, which raises
`FairyMistake`), changes the board, and collects `Effect`s for the runtime to carry out:
interrupt a fairy (switch its mode, give it input), wait, notify waiters, add
memory-transition items, end the turn.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from steward.canvas.bounds import Rect
from steward.fairies.memory import HistoryItem, MemoryLevel, project_end_items, task_end_items
from steward.fairies.mistakes import FairyMistake
from steward.fairies.modes import ModeName
from steward.fairies.project_task import Task, task_bounds
from steward.fairies.projects import ProjectBoard, ProjectKind, task_completed_key
from steward.fairies.roster import Roster


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


@dataclass
class BoardOps:
    room_id: str
    fairy_id: str
    board: ProjectBoard
    roster: Roster
    effects: list[Effect] = field(default_factory=list)
    end_turn: bool = False
    origin: tuple[float, float] = (0.0, 0.0)  # of the model's coordinates (briefs use them)
    # The operations of `steward.actions.effect.FairyOps`, called by each spec's effect.

    def start_project(self, data: dict[str, Any], kind: ProjectKind) -> None:
        members = [
            f.id
            for f in self.roster.fairies.values()
            if f.id != self.fairy_id
            and f.role == "drone"
            and self.board.active_project_of(f.id) is None
        ]
        self.board.start_project(
            self.roster.get(self.fairy_id).id,
            title=_s(data, "title", "Project"),
            description=_s(data, "description"),
            plan=_s(data, "plan"),
            members=members,
            kind=kind,
        )

    def create_project_task(self, data: dict[str, Any]) -> None:
        assignee = data.get("assignee")
        self.board.create_project_task(
            self.fairy_id,
            title=_s(data, "title"),
            text=_s(data, "text"),
            bounds=_area(data),
            assignee=assignee if isinstance(assignee, str) and assignee else None,
            task_id=_s(data, "taskId") or None,
        )

    def delete_project_task(self, data: dict[str, Any]) -> None:
        self.board.delete_project_task(self.fairy_id, _s(data, "taskId"))

    def direct(self, data: dict[str, Any]) -> None:
        to = data.get("fairyId")
        task = self.board.direct(
            self.fairy_id, _s(data, "taskId"), to if isinstance(to, str) else None
        )
        assert task.assigned_to is not None
        brief = drone_brief(task, self.fairy_id, self.origin)
        self.effects.append(SwitchFairy(task.assigned_to, "working-drone", brief))

    def await_tasks(self, data: dict[str, Any], waiting: ModeName) -> None:
        ids = data.get("taskIds")
        ids = [i for i in ids if isinstance(i, str)] if isinstance(ids, list) else []
        keys = self.board.awaitable(self.fairy_id, ids)
        if not keys:
            # Every named task finished while the model was answering: review, do not wait.
            done = ", ".join(ids)
            self.effects.append(
                Review(
                    self.fairy_id,
                    f"The tasks you wanted to await are already done: {done}. "
                    "Review them, then start more tasks or end the project.",
                )
            )
            self.end_turn = True
            return
        msgs = []
        for key in keys:
            task = self.board.tasks[key.split(":", 1)[1]]
            msgs.append(
                (key, f'Task "{task.id}" ({task.title}) by {task.assigned_to} is done. Review it.')
            )
        self.effects.append(WaitFor(self.fairy_id, msgs))
        self.effects.append(SwitchFairy(self.fairy_id, waiting))
        self.end_turn = True

    def end_project(self) -> None:
        project = self.board.end_project(self.fairy_id)
        led = project_end_items(project.title, list(project.members), led=True)
        self.effects.append(Remember(self.fairy_id, led))
        for m in project.members:
            self.effects.append(Remember(m, project_end_items(project.title, [], led=False)))
            self.effects.append(SwitchFairy(m, "idling"))
        self.effects.append(SwitchFairy(self.fairy_id, "idling"))
        self.end_turn = True

    def abort_project(self) -> None:
        project = self.board.active_project_of(self.fairy_id)
        if project is None or project.orchestrator != self.fairy_id:
            raise FairyMistake("You are not leading a project.")
        abort_effects(self, project.id)
        self.end_turn = True

    def mark_done(self, back: ModeName, level: MemoryLevel) -> None:
        task = self.board.mark_done(self.fairy_id)
        items = task_end_items(task.id, task.title, task.text, level=level)
        self.effects.append(Remember(self.fairy_id, items))
        self.effects.append(Notify(task_completed_key(task.id)))
        self.effects.append(SwitchFairy(self.fairy_id, back))
        self.end_turn = True

    def start_own_task(self, data: dict[str, Any], working: ModeName) -> None:
        task = self.board.start_own_task(self.fairy_id, _s(data, "taskId"))
        self.effects.append(
            SwitchFairy(self.fairy_id, working, f'Work on your task "{task.id}": {task.text}')
        )
        self.end_turn = True

    def create_solo_task(self, data: dict[str, Any]) -> None:
        area = _area(data) if all(data.get(k) is not None for k in "xywh") else None
        self.board.create_solo_task(
            self.fairy_id,
            title=_s(data, "title"),
            text=_s(data, "text"),
            bounds=area,
            task_id=_s(data, "taskId") or None,
        )

    def fly_to(self, data: dict[str, Any]) -> None:
        self.roster.fly_to(self.fairy_id, _area(data))
        self.effects.append(Moved(self.fairy_id))


def abort_effects(c: BoardOps, project_id: str) -> None:
    """Abort or disband (also used by the system): every member goes back to idling."""
    project, _ = c.board.abort_project(project_id)
    for m in (project.orchestrator, *project.members):
        c.effects.append(SwitchFairy(m, "idling"))
