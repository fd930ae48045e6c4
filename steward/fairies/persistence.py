"""Mapping between fairy types and the rows of `steward.store.fairies`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from steward.fairies.memory import HistoryItem
from steward.fairies.modes import ModeName, Role
from steward.fairies.project_task import Task
from steward.fairies.projects import Project
from steward.fairies.roster import Fairy
from steward.fairies.waits import WaitCondition
from steward.protocol.box import Box

Row = dict[str, Any]


def _rect(raw: Any) -> Box | None:
    if not isinstance(raw, Mapping):
        return None
    return Box(float(raw["x"]), float(raw["y"]), float(raw["w"]), float(raw["h"]))


def fairy_row(
    f: Fairy, continuations: int, *, asker: str | None = None, model: str | None = None
) -> Row:
    return {
        "fairy_id": f.id,
        "name": f.name,
        "color": f.color,
        "role": f.role,
        "mode": f.mode,
        "x": f.x,
        "y": f.y,
        "personality": f.personality,
        "task_bounds": f.task_bounds.to_dict() if f.task_bounds else None,
        "continuations": continuations,
        "asker": asker,
        "model": model,
    }


def fairy_from(row: Mapping[str, Any]) -> tuple[Fairy, int]:
    fairy = Fairy(
        id=row["fairy_id"],
        name=row["name"],
        color=row["color"],
        role=cast(Role, row["role"]),
        mode=cast(ModeName, row["mode"]),
        x=float(row["x"]),
        y=float(row["y"]),
        personality=row["personality"],
        task_bounds=_rect(row.get("task_bounds")),
    )
    return fairy, int(row.get("continuations") or 0)


def history_row(i: HistoryItem) -> Row:
    return {
        "item_id": i.id,
        "kind": i.kind,
        "memory_level": i.memory_level,
        "text": i.text,
        "origin": i.origin,
        "action": i.action,
        "user_text": i.user_text,
        "run": i.run,
        "asker": i.asker,
        "created": i.created,
    }


def history_from(row: Mapping[str, Any]) -> HistoryItem:
    return HistoryItem(
        kind=row["kind"],
        memory_level=row["memory_level"],
        text=row["text"],
        id=row["item_id"],
        origin=row.get("origin"),
        action=row.get("action"),
        user_text=row.get("user_text"),
        run=row.get("run"),
        asker=row.get("asker"),
        created=float(row.get("created") or 0.0),
    )


def project_row(p: Project) -> Row:
    return {
        "project_id": p.id,
        "room_id": p.room_id,
        "title": p.title,
        "description": p.description,
        "plan": p.plan,
        "kind": p.kind,
        "orchestrator": p.orchestrator,
        "members": list(p.members),
        "status": p.status,
    }


def project_from(row: Mapping[str, Any]) -> Project:
    return Project(
        id=row["project_id"],
        room_id=row["room_id"],
        title=row["title"],
        description=row["description"],
        plan=row["plan"],
        kind=row["kind"],
        orchestrator=row["orchestrator"],
        members=tuple(row["members"]),
        status=row["status"],
    )


def task_row(t: Task) -> Row:
    return {
        "task_id": t.id,
        "room_id": t.room_id,
        "project_id": t.project_id,
        "title": t.title,
        "text": t.text,
        "status": t.status,
        "assigned_to": t.assigned_to,
        "bounds": t.bounds.to_dict() if t.bounds else None,
        "created_by": t.created_by,
    }


def task_from(row: Mapping[str, Any]) -> Task:
    return Task(
        id=row["task_id"],
        room_id=row["room_id"],
        title=row["title"],
        text=row["text"],
        status=row["status"],
        project_id=row.get("project_id"),
        assigned_to=row.get("assigned_to"),
        bounds=_rect(row.get("bounds")),
        created_by=row.get("created_by"),
    )


def wait_row(w: WaitCondition) -> Row:
    return {"agent_id": w.fairy_id, "key": w.key, "message": w.message}


def wait_from(row: Mapping[str, Any]) -> WaitCondition:
    return WaitCondition(row["agent_id"], row["key"], row["message"])
