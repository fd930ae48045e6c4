"""Leading a project (orchestrated or duo): its effects, shared by both variants, and the
brief a directed fairy starts its task with."""

from __future__ import annotations

from typing import Any

from steward.actions.agent import ActionEffect, FairyAgent, ModeName, ProjectKind, TaskView
from steward.actions.fairy.field_values import area_field, text_field
from steward.actions.mistakes import FairyMistake


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


def start_project(kind: ProjectKind) -> ActionEffect:
    """Open a project of `kind` led by the acting fairy, with the free drones."""

    def effect(agent: FairyAgent, data: dict[str, Any]) -> None:
        agent.board.start_project(
            agent.fairy_id,
            title=text_field(data, "title", "Project"),
            description=text_field(data, "description"),
            plan=text_field(data, "plan"),
            members=agent.free_drones(),
            kind=kind,
        )

    return effect


def create_project_task(agent: FairyAgent, data: dict[str, Any]) -> None:
    """Add a task with its area and, maybe, its assignee to the led project."""
    assignee = data.get("assignee")
    agent.board.create_project_task(
        agent.fairy_id,
        title=text_field(data, "title"),
        text=text_field(data, "text"),
        bounds=area_field(data),
        assignee=assignee if isinstance(assignee, str) and assignee else None,
        task_id=text_field(data, "taskId") or None,
    )


def direct(agent: FairyAgent, data: dict[str, Any]) -> None:
    """Tell a task's assignee (or the fairy named) to start it now."""
    to = data.get("fairyId")
    task = agent.board.direct(
        agent.fairy_id, text_field(data, "taskId"), to if isinstance(to, str) else None
    )
    assert task.assigned_to is not None
    brief = drone_brief(task, agent.fairy_id)  # its area in page coordinates
    agent.interrupt(task.assigned_to, "working-drone", brief)


def await_tasks(waiting: ModeName) -> ActionEffect:
    """Wait in `waiting` mode for the named tasks (or all running ones)."""

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


def end_project(agent: FairyAgent, data: dict[str, Any]) -> None:
    """Close the led project; every member goes back to idling."""
    project = agent.board.end_project(agent.fairy_id)
    agent.remember_project_end(agent.fairy_id, project)
    for m in project.members:
        agent.remember_project_end(m, project)
        agent.interrupt(m, "idling")
    agent.switch_mode("idling")
    agent.end_turn()


def abort_project(agent: FairyAgent, data: dict[str, Any]) -> None:
    """Stop the led project and its running tasks; everyone goes idling."""
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
