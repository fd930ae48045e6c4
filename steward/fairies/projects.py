"""Projects and the room's task board: who leads, who works, which task is where.

`ProjectBoard` is pure state plus the rules of the fairy actions. Every rule a model can
break raises `FairyMistake` with feedback it can act on. Changed objects are queued in
`pending` so the runtime persists exactly what changed (`drain()`).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Literal

from steward.actions.fairy_port import ProjectKind as ProjectKind
from steward.actions.mistakes import FairyMistake
from steward.fairies.project_task import Task, new_task_id
from steward.protocol.box import Box

ProjectStatus = Literal["active", "done", "aborted"]


def new_project_id() -> str:
    return "p" + uuid.uuid4().hex[:8]


def task_completed_key(task_id: str) -> str:
    return f"task-completed:{task_id}"


def completed_task_id(key: str) -> str | None:
    """The task a `task_completed_key` names; None for any other wait key."""
    tid = key.removeprefix(task_completed_key(""))
    return tid if tid != key else None


@dataclass(frozen=True)
class Project:
    """One project: who leads it, who works on it, its plan and how far it got."""

    id: str
    room_id: str
    title: str
    description: str
    plan: str
    kind: ProjectKind
    orchestrator: str
    members: tuple[str, ...]  # the other fairies (drones, or the duo partner)
    status: ProjectStatus = "active"

    def has_member(self, fairy_id: str) -> bool:
        return fairy_id == self.orchestrator or fairy_id in self.members


@dataclass
class ProjectBoard:
    """A room's projects and tasks, the rules of the fairy actions that change them, and what
    changed since the last save."""

    room_id: str
    projects: dict[str, Project] = field(default_factory=dict)
    tasks: dict[str, Task] = field(default_factory=dict)
    pending: list[Project | Task] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)  # task ids removed since the last drain

    # -- reads -------------------------------------------------------------------------
    def active_project_of(self, fairy_id: str) -> Project | None:
        for p in self.projects.values():
            if p.status == "active" and p.has_member(fairy_id):
                return p
        return None

    def project_tasks(self, project_id: str) -> list[Task]:
        return [t for t in self.tasks.values() if t.project_id == project_id]

    def task_list(self, project_id: str) -> str:
        """One line for feedback: each task's id, status and assignee."""
        return (
            "; ".join(
                f"{t.id} {t.status}" + (f" ({t.assigned_to})" if t.assigned_to else " (unassigned)")
                for t in self.project_tasks(project_id)
            )
            or "none"
        )

    def working_task_of(self, fairy_id: str) -> Task | None:
        for t in self.tasks.values():
            if t.assigned_to == fairy_id and t.status == "in-progress":
                return t
        return None

    def solo_tasks_of(self, fairy_id: str) -> list[Task]:
        return [
            t for t in self.tasks.values() if t.project_id is None and t.assigned_to == fairy_id
        ]

    def task(self, task_id: str) -> Task:
        t = self.tasks.get(task_id)
        if t is None:
            known = ", ".join(sorted(self.tasks)) or "none"
            raise FairyMistake(f'There is no task "{task_id}". Known tasks: {known}.')
        return t

    def drain(self) -> tuple[list[Project | Task], list[str]]:
        out, self.pending = self.pending, []
        gone, self.deleted = self.deleted, []
        return out, gone

    def load(self, projects: Iterable[Project], tasks: Iterable[Task]) -> None:
        self.projects = {p.id: p for p in projects}
        self.tasks = {t.id: t for t in tasks}
        self.pending = []
        self.deleted = []

    # -- writes ------------------------------------------------------------------------
    def _put(self, obj: Project | Task) -> None:
        if isinstance(obj, Project):
            self.projects[obj.id] = obj
        else:
            self.tasks[obj.id] = obj
        self.pending.append(obj)

    def _led_project(self, fairy_id: str) -> Project:
        p = self.active_project_of(fairy_id)
        if p is None or p.orchestrator != fairy_id:
            raise FairyMistake("You are not leading a project. Start one first.")
        return p

    def start_project(
        self,
        orchestrator: str,
        *,
        title: str,
        description: str,
        plan: str,
        members: Iterable[str],
        kind: ProjectKind = "orchestrated",
        project_id: str | None = None,
    ) -> Project:
        if self.active_project_of(orchestrator) is not None:
            raise FairyMistake("You already lead an active project; end or abort it first.")
        crew = tuple(m for m in dict.fromkeys(members) if m != orchestrator)
        if not crew:
            raise FairyMistake("A project needs at least one other fairy, and none is free.")
        if kind == "duo" and len(crew) != 1:
            crew = crew[:1]
        busy = [m for m in crew if self.active_project_of(m) is not None]
        if busy:
            raise FairyMistake(f"These fairies are busy in another project: {', '.join(busy)}.")
        project = Project(
            id=project_id or new_project_id(),
            room_id=self.room_id,
            title=title.strip() or "Untitled project",
            description=description,
            plan=plan,
            kind=kind,
            orchestrator=orchestrator,
            members=crew,
        )
        self._put(project)
        return project

    def create_project_task(
        self,
        by: str,
        *,
        title: str,
        text: str,
        bounds: Box,
        assignee: str | None,
        task_id: str | None = None,
    ) -> Task:
        project = self._led_project(by)
        if task_id is not None and task_id in self.tasks:
            raise FairyMistake(f'A task "{task_id}" already exists; pick another id.')
        if assignee is not None:
            self._check_assignee(project, by, assignee)
        task = Task(
            id=task_id or new_task_id(),
            room_id=self.room_id,
            title=title.strip() or "Untitled task",
            text=text,
            project_id=project.id,
            assigned_to=assignee,
            bounds=bounds,
            created_by=by,
        )
        self._put(task)
        return task

    def _check_assignee(self, project: Project, by: str, assignee: str) -> None:
        if assignee == by and project.kind == "orchestrated":
            raise FairyMistake(
                "You cannot assign a task to yourself: orchestrators do not edit the canvas."
                " Assign it to one of: " + ", ".join(project.members) + "."
            )
        if not project.has_member(assignee):
            raise FairyMistake(
                f'"{assignee}" is not in this project. Members: ' + ", ".join(project.members) + "."
            )

    def delete_project_task(self, by: str, task_id: str) -> Task:
        project = self._led_project(by)
        task = self.task(task_id)
        if task.project_id != project.id:
            raise FairyMistake(f'Task "{task_id}" is not part of your project.')
        if task.status == "in-progress":
            raise FairyMistake(f'Task "{task_id}" is in progress; wait for it to finish.')
        del self.tasks[task_id]
        self.pending = [o for o in self.pending if not (isinstance(o, Task) and o.id == task_id)]
        self.deleted.append(task_id)
        return task

    def direct(self, by: str, task_id: str, to: str | None = None) -> Task:
        """Start a project task on another fairy (direct-to-start-…-task)."""
        project = self._led_project(by)
        task = self.task(task_id)
        if task.project_id != project.id:
            raise FairyMistake(f'Task "{task_id}" is not part of your project.')
        target = to or task.assigned_to
        if target is None:
            raise FairyMistake(f'Task "{task_id}" has no assignee; say which fairy should do it.')
        if target == by:
            raise FairyMistake(
                "You cannot direct yourself to do a task. Please direct another fairy to do it."
            )
        self._check_assignee(project, by, target)
        if task.status != "todo":
            raise FairyMistake(f'Task "{task_id}" is {task.status}; only todo tasks can start.')
        current = self.working_task_of(target)
        if current is not None:
            raise FairyMistake(f'{target} is still working on task "{current.id}".')
        started = replace(task, assigned_to=target).moved_to("in-progress")
        self._put(started)
        return started

    def start_own_task(self, by: str, task_id: str) -> Task:
        """start-task (solo) and start-duo-task: the caller works the task itself."""
        task = self.task(task_id)
        if task.project_id is None:
            if task.assigned_to not in (None, by):
                raise FairyMistake(f'Task "{task_id}" belongs to {task.assigned_to}.')
        else:
            project = self.projects.get(task.project_id)
            if project is None or project.status != "active" or not project.has_member(by):
                raise FairyMistake(f'Task "{task_id}" is not part of a project you are in.')
            if project.kind != "duo" and by == project.orchestrator:
                raise FairyMistake("Orchestrators do not work tasks themselves; direct a drone.")
        if task.status != "todo":
            raise FairyMistake(f'Task "{task_id}" is {task.status}; only todo tasks can start.')
        current = self.working_task_of(by)
        if current is not None:
            raise FairyMistake(f'You are still working on task "{current.id}"; finish it first.')
        started = replace(task, assigned_to=by).moved_to("in-progress")
        self._put(started)
        return started

    def create_solo_task(
        self, by: str, *, title: str, text: str, bounds: Box | None, task_id: str | None = None
    ) -> Task:
        if task_id is not None and task_id in self.tasks:
            raise FairyMistake(f'A task "{task_id}" already exists; pick another id.')
        task = Task(
            id=task_id or new_task_id(),
            room_id=self.room_id,
            title=title.strip() or "Untitled task",
            text=text,
            assigned_to=by,
            bounds=bounds,
            created_by=by,
        )
        self._put(task)
        return task

    def mark_done(self, by: str, task_id: str | None = None) -> Task:
        task = self.working_task_of(by) if task_id is None else self.task(task_id)
        if task is None:
            raise FairyMistake("You are not working on a task.")
        if task.assigned_to != by:
            raise FairyMistake(f'Task "{task.id}" is not yours; it belongs to {task.assigned_to}.')
        if task.status != "in-progress":
            raise FairyMistake(f'Task "{task.id}" is {task.status}, not in progress.')
        done = task.moved_to("done")
        self._put(done)
        return done

    def awaitable(self, by: str, task_ids: Iterable[str]) -> list[str]:
        """The wait keys for await-…-completion; only tasks not done yet are awaited.

        Naming tasks that finished meanwhile is not a mistake (the model saw an older
        snapshot): the result is then empty and the caller reviews instead of waiting."""
        project = self._led_project(by)
        named = list(dict.fromkeys(task_ids))
        ids = named or [t.id for t in self.project_tasks(project.id) if t.status == "in-progress"]
        if not ids:
            # Nobody would ever wake this wait: say so, with the board to act on.
            raise FairyMistake(
                "None of your tasks is in progress, so nothing would wake you. Tasks: "
                + self.task_list(project.id)
                + ". Direct a fairy to start a todo task, or end the project."
            )
        keys: list[str] = []
        for tid in ids:
            task = self.task(tid)
            if task.project_id != project.id:
                raise FairyMistake(f'Task "{tid}" is not part of your project.')
            if task.status == "todo":
                raise FairyMistake(f'Task "{tid}" has not started; direct someone to start it.')
            if task.status == "in-progress":
                keys.append(task_completed_key(tid))
        return keys

    def release(self, fairy_id: str) -> Task | None:
        """A user stopped the fairy mid-task: its working task goes back to todo."""
        task = self.working_task_of(fairy_id)
        if task is None:
            return None
        back = task.moved_to("todo")
        self._put(back)
        return back

    def end_project(self, by: str) -> Project:
        project = self._led_project(by)
        running = [t.id for t in self.project_tasks(project.id) if t.status == "in-progress"]
        if running:
            raise FairyMistake(
                "Tasks still in progress: " + ", ".join(running) + ". Await them before ending."
            )
        ended = replace(project, status="done")
        self._put(ended)
        return ended

    def abort_project(self, project_id: str) -> tuple[Project, list[Task]]:
        """Abort (by its orchestrator or the system): running tasks go back to todo."""
        project = self.projects[project_id]
        aborted = replace(project, status="aborted")
        self._put(aborted)
        released: list[Task] = []
        for t in self.project_tasks(project_id):
            if t.status == "in-progress":
                back = t.moved_to("todo")
                self._put(back)
                released.append(back)
        return aborted, released
