"""The schemas several fairy actions share (solo, project and duo variants)."""

from __future__ import annotations

from pydantic import Field

from steward.actions.base import ActionModel


class Project(ActionModel):
    """What an orchestrator writes to start a project: its title, what it is for, and the plan of
    its tasks."""

    title: str
    description: str = ""
    plan: str = Field("", description="tasks, where they sit, their order, what runs in parallel")


class ProjectTask(ActionModel):
    """One task of a project as the orchestrator writes it: its id, words, area and who should do
    it."""

    taskId: str = Field(description="a short id you choose, e.g. 'barn'")
    title: str
    text: str = Field(description="what to do, in enough detail to work alone")
    x: float
    y: float
    w: float
    h: float
    assignee: str | None = Field(None, description="fairy id of a project member")


class TaskRef(ActionModel):
    """The actions that name one task and nothing else (start it, mark it done)."""

    taskId: str


class Direct(ActionModel):
    """What an orchestrator writes to start a task: which one, and which fairy does it."""

    taskId: str
    fairyId: str | None = Field(None, description="who starts it (default: its assignee)")


class Await(ActionModel):
    """What an orchestrator writes to wait: the tasks whose completion wakes it."""

    taskIds: list[str] = Field(default_factory=list, description="empty: all tasks in progress")


class Nothing(ActionModel):
    """An action that changes nothing but may say why (an end of turn, a pause)."""

    reason: str = ""
