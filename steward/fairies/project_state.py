"""A project as the browsers see it (`ProjectState` on `agent:project`): its title, plan,
lead and members, each task with its owner, status and area, and who waits on what. Built
from the board and the waits as they stand, so every change sends the whole truth again and
a tab never has to add up deltas; cut to fit one packet (a long plan ends in an ellipsis,
past `MAX_PROJECT_TASKS` the newest tasks are left out and counted in the plan's last line).
"""

from __future__ import annotations

import time

from steward.fairies.projects import Project, ProjectBoard, completed_task_id
from steward.fairies.waits import WaitCondition
from steward.protocol.limits import MAX_PLAN_CHARS, MAX_PROJECT_TASKS, MAX_TITLE_CHARS
from steward.protocol.messages import ProjectState, ProjectTaskState, ProjectWait

_MODE_KEY = "agent-mode-transition:"


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _wait(condition: WaitCondition) -> ProjectWait:
    task = completed_task_id(condition.key)
    if task is not None:
        return ProjectWait(fairy=condition.fairy_id, task=task)
    on, _, mode = condition.key.removeprefix(_MODE_KEY).partition(":")
    return ProjectWait(fairy=condition.fairy_id, on_fairy=on or None, mode=mode or None)


def project_state(
    board: ProjectBoard,
    project: Project,
    waits: list[WaitCondition],
    *,
    asker: str | None = None,
    session_id: str | None = None,
    now: float | None = None,
) -> ProjectState:
    tasks = board.project_tasks(project.id)
    shown, hidden = tasks[:MAX_PROJECT_TASKS], len(tasks) - MAX_PROJECT_TASKS
    note = f"\n(and {hidden} more task{'s' if hidden != 1 else ''} not shown)" if hidden > 0 else ""
    plan = _cut(project.plan, MAX_PLAN_CHARS - len(note)) + note
    people = {project.orchestrator, *project.members}
    return ProjectState(
        project_id=project.id,
        title=_cut(project.title, MAX_TITLE_CHARS),
        plan=plan,
        kind=project.kind,
        status=project.status,
        lead=project.orchestrator,
        members=list(project.members),
        asker=asker,
        session_id=session_id,
        tasks=[
            ProjectTaskState(
                id=t.id,
                title=_cut(t.title, MAX_TITLE_CHARS),
                status=t.status,
                owner=t.assigned_to,
                area=t.bounds if t.bounds is not None else None,
            )
            for t in shown
        ],
        # An ended project waits on nothing (its waits are cleared with it).
        waits=[_wait(c) for c in waits if c.fairy_id in people][:MAX_PROJECT_TASKS]
        if project.status == "active"
        else [],
        ts=time.time() if now is None else now,
    )
