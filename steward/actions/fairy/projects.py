"""Leading a project (orchestrated or duo): its effects, shared by both variants, and the
brief a directed fairy starts its task with."""

from __future__ import annotations

from typing import Any

from steward.actions.fairy.field_values import area_field, text_field
from steward.actions.fairy_port import ActionEffect, FairyPort, ModeName, ProjectKind, TaskView
from steward.actions.mistakes import FairyMistake


def drone_brief(task: TaskView, orchestrator: str) -> str:
    """The prompt a directed fairy starts its task with. Neither the task's text nor its
    area is written here: the request shows the task once, with its bounds in that
    request's own coordinates (`You are working on: …`)."""
    where = " inside your area" if task.bounds else ""
    return (
        f'{orchestrator} asked you to do task "{task.id}" ({task.title}), described above '
        f'under "You are working on". Work only{where}, then use mark-my-task-done.'
    )


def start_project(kind: ProjectKind) -> ActionEffect:
    """Open a project of `kind` led by the acting fairy, with the free drones."""

    def effect(fairy: FairyPort, data: dict[str, Any]) -> None:
        fairy.board.start_project(
            fairy.fairy_id,
            title=text_field(data, "title", "Project"),
            description=text_field(data, "description"),
            plan=text_field(data, "plan"),
            members=fairy.free_drones(),
            kind=kind,
        )

    return effect


def create_project_task(fairy: FairyPort, data: dict[str, Any]) -> None:
    """Add a task with its area and, maybe, its assignee to the led project."""
    assignee = data.get("assignee")
    fairy.board.create_project_task(
        fairy.fairy_id,
        title=text_field(data, "title"),
        text=text_field(data, "text"),
        bounds=area_field(data),
        assignee=assignee if isinstance(assignee, str) and assignee else None,
        task_id=text_field(data, "taskId") or None,
    )


def direct(fairy: FairyPort, data: dict[str, Any]) -> None:
    """Tell a task's assignee (or the fairy named) to start it now."""
    to = data.get("fairyId")
    task = fairy.board.direct(
        fairy.fairy_id, text_field(data, "taskId"), to if isinstance(to, str) else None
    )
    assert task.assigned_to is not None
    brief = drone_brief(task, fairy.fairy_id)
    fairy.interrupt(task.assigned_to, "working-drone", brief)


def await_tasks(waiting: ModeName) -> ActionEffect:
    """Wait in `waiting` mode for the named tasks (or all running ones)."""

    def effect(fairy: FairyPort, data: dict[str, Any]) -> None:
        ids = data.get("taskIds")
        ids = [i for i in ids if isinstance(i, str)] if isinstance(ids, list) else []
        keys = fairy.board.awaitable(fairy.fairy_id, ids)
        if not keys:
            # Every named task finished while the model was answering: review, do not wait.
            done = ", ".join(ids)
            fairy.review(
                f"The tasks you wanted to await are already done: {done}. "
                "Review them, then start more tasks or end the project."
            )
            fairy.end_turn()
            return
        wakes = []
        for key in keys:
            task = fairy.board.task(key.split(":", 1)[1])
            wakes.append(
                (key, f'Task "{task.id}" ({task.title}) by {task.assigned_to} is done. Review it.')
            )
        fairy.wait(wakes)
        fairy.switch_mode(waiting)
        fairy.end_turn()

    return effect


def end_project(fairy: FairyPort, data: dict[str, Any]) -> None:
    """Close the led project; every member goes back to idling."""
    project = fairy.board.end_project(fairy.fairy_id)
    fairy.remember_project_end(fairy.fairy_id, project)
    for m in project.members:
        fairy.remember_project_end(m, project)
        fairy.interrupt(m, "idling")
    fairy.switch_mode("idling")
    fairy.end_turn()


def abort_project(fairy: FairyPort, data: dict[str, Any]) -> None:
    """Stop the led project and its running tasks; everyone goes idling."""
    project = fairy.board.active_project_of(fairy.fairy_id)
    if project is None or project.orchestrator != fairy.fairy_id:
        raise FairyMistake("You are not leading a project.")
    fairy.board.abort_project(project.id)
    for m in (project.orchestrator, *project.members):
        if m == fairy.fairy_id:
            fairy.switch_mode("idling")
        else:
            fairy.interrupt(m, "idling")
    fairy.end_turn()
