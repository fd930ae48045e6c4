"""What a working fairy's `neighbours` prompt part is given: its task area and the other
tasks of its project that have an area (the part picks the shapes around it)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from steward.fairies.project_task import Task
from steward.prompt.state import Neighbourhood, NeighbourTask


def neighbourhood_of(
    task: Task | None, project_tasks: Iterable[Task], made_by: Mapping[str, str] | None = None
) -> Neighbourhood | None:
    """None unless the fairy works a task with an area. `made_by`: which task made each
    shape, so a neighbour is credited to the task that drew it."""
    if task is None or task.bounds is None:
        return None
    made: dict[str, set[str]] = {}
    for sid, tid in (made_by or {}).items():
        made.setdefault(tid, set()).add(sid)
    others = tuple(
        NeighbourTask(
            t.id, t.title, t.assigned_to, t.bounds, t.status, frozenset(made.get(t.id, ()))
        )
        for t in project_tasks
        if t.id != task.id and t.bounds is not None
    )
    return Neighbourhood(task.bounds, others)
