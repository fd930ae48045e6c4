"""Prompt parts the fairy modes need, as a small registry: name → text (or None to omit).

Each mode lists the parts it sees (`ModeDefinition.parts`); canvas parts (shapes,
viewport, …) are built here too, restricted to the task area when the fairy works a task,
since a working fairy sees only its bounds.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from steward.canvas.bounds import Rect, shape_bounds
from steward.fairies.bounds import shapes_in
from steward.fairies.memory import HistoryItem, filter_history
from steward.fairies.modes import ModeDefinition
from steward.fairies.projects import Project
from steward.fairies.roster import Fairy
from steward.fairies.tasks import Task


@dataclass
class FairyView:
    """Everything a part may read for one turn of one fairy."""

    fairy: Fairy
    mode: ModeDefinition
    others: list[Fairy]
    project: Project | None
    project_tasks: list[Task]
    task: Task | None  # the task being worked, if any
    own_tasks: list[Task]
    history: list[HistoryItem]
    shapes: dict[str, dict[str, Any]]
    viewport: Rect
    selection: list[str] = field(default_factory=list)
    request: str = ""

    @property
    def area(self) -> Rect | None:
        return self.task.bounds if self.task is not None else None


def _box(r: Rect) -> str:
    return f"x={r.x:g}, y={r.y:g}, w={r.w:g}, h={r.h:g}"


def _personality(v: FairyView) -> str | None:
    p = v.fairy.personality or "curious, tidy and brief"
    return f"You are {v.fairy.name} (id {v.fairy.id}), a fairy. Personality: {p}."


def _others(v: FairyView) -> str | None:
    if not v.others:
        return None
    lines = [f"- {f.id} ({f.name}, {f.role}): {f.mode} at ({f.x:g}, {f.y:g})" for f in v.others]
    return "Other fairies in this room:\n" + "\n".join(lines)


def _project_orchestrator(v: FairyView) -> str | None:
    if v.project is None:
        free = [f.id for f in v.others if f.role == "drone" and f.mode in ("idling", "sleeping")]
        return "You have no project yet. Fairies free to help: " + (", ".join(free) or "none")
    p = v.project
    lines = [
        f'Your project "{p.title}" ({p.status}): {p.description}',
        f"Plan: {p.plan}",
        "Members: " + ", ".join(p.members),
        "Tasks:",
    ]
    lines += [f"- {t.describe()}" for t in v.project_tasks] or ["- none yet"]
    return "\n".join(lines)


def _project_drone(v: FairyView) -> str | None:
    if v.project is None:
        return None
    mine = v.task.describe() if v.task is not None else "none right now"
    return (
        f'You are a member of the project "{v.project.title}" led by {v.project.orchestrator}.'
        f" Your task: {mine}"
    )


def _working_tasks(v: FairyView) -> str | None:
    if v.task is not None:
        return (
            f"You are working on: {v.task.describe()}\n"
            f"You can only see and edit inside your task area ({_box(v.task.bounds)})."
            if v.task.bounds is not None
            else f"You are working on: {v.task.describe()}"
        )
    if v.own_tasks:
        return "Your tasks:\n" + "\n".join(f"- {t.describe()}" for t in v.own_tasks)
    return None


def _viewport(v: FairyView) -> str | None:
    return f"Your view: {_box(v.area or v.viewport)}."


def _shapes(v: FairyView) -> str | None:
    area = v.area or v.viewport
    seen = shapes_in(v.shapes, area) if v.area is not None else list(v.shapes.values())
    if not seen:
        return "There are no shapes in your view."
    brief = []
    for s in seen[:200]:
        b = shape_bounds(s, v.shapes)
        props = s.get("props") or {}
        item: dict[str, Any] = {"shapeId": s["id"], "type": s.get("type")}
        item.update({k: round(getattr(b, k)) for k in ("x", "y", "w", "h")})
        if props.get("text"):
            item["text"] = str(props["text"])[:80]
        brief.append(item)
    return "Shapes you can see: " + json.dumps(brief, separators=(",", ":"))


def _selection(v: FairyView) -> str | None:
    return ("Selected: " + ", ".join(v.selection)) if v.selection else None


def _history(v: FairyView) -> str | None:
    items = filter_history(v.history, v.mode.memory)
    if not items:
        return None
    return "What you remember:\n" + "\n".join(f"[{i.kind}] {i.model_text()}" for i in items)


def _none(v: FairyView) -> str | None:
    return None


PARTS: dict[str, Callable[[FairyView], str | None]] = {
    "personality": _personality,
    "other-fairies": _others,
    "project-orchestrator": _project_orchestrator,
    "project-drone": _project_drone,
    "working-tasks": _working_tasks,
    "viewport": _viewport,
    "shapes": _shapes,
    "selection": _selection,
    "history": _history,
    # Filled by the turn itself (request text) or not used by scripted runs.
    "messages": _none,
    "screenshot": _none,
    "user-changes": _none,
    "todo": _none,
}


def build_parts(view: FairyView) -> list[str]:
    out: list[str] = []
    for name in view.mode.parts:
        text = PARTS.get(name, _none)(view)
        if text:
            out.append(text)
    return out
