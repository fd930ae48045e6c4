"""Read a Messages request as a model would: only what the steward put in it.

A test model must not peek at the steward's state, so it learns everything from the body the
SDK sent: the response schema advertised in the system prompt, the shapes listed in the user
content (any JSON object carrying a `shapeId`), the agent's bounds (its task area, else its
view), whether a screenshot image block is present, the mode named in the prompt, and the
prefilled opening of the assistant turn. JSON is found wherever it sits in the text, so the
reader does not depend on how a prompt part words its label.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from steward.protocol.box import Box

_DECODER = json.JSONDecoder()
_NUM = r"(-?\d+(?:\.\d+)?)"
_BOX_TEXT = re.compile(rf"x={_NUM}, y={_NUM}, w={_NUM}, h={_NUM}")
_MODE = re.compile(r"# Canvas agent \(([\w-]+)\)|[Yy]our mode is ([\w-]+)")
# A task as prompts describe it: `[id] "title" (status, assigned to …) bounds=(…): text`.
_TASK = re.compile(r'\[([\w-]+)\] "([^"]*)" \(([\w-]+),([^)]*)\)')
# A fairy in a roster line: `- id (name, role): …`.
_FAIRY = re.compile(r"^- ([\w-]+) \(([^,()]+), ([\w-]+)\): ([\w-]+)", re.MULTILINE)
# The project the agent leads or works in: `Your project "title" (status)`.
_PROJECT = re.compile(r'Your project "[^"]*" \(([\w-]+)\)')
# Who may help a leader without a project: `Fairies free to help: a, b` (or `none`).
_FREE = re.compile(r"Fairies free to help: ([^\n]*)")
# The agent's own id, as its personality line gives it: `You are Ada (id fairy-1)`.
_SELF = re.compile(r"\bYou are [^(\n]*\(id ([\w-]+)\)")


@dataclass(frozen=True)
class TaskLine:
    """One task as a request lists it: id, title, status, assignee and area."""

    id: str
    title: str
    status: str
    assigned_to: str | None
    bounds: Box | None


@dataclass
class RequestView:
    """What one request told the model."""

    system: str
    user: str
    schema: dict[str, Any] | None
    shapes: dict[str, dict[str, Any]]  # shapeId → the listing it was shown
    bounds: Box | None  # where the agent may work: its task area, else its view
    has_screenshot: bool
    mode: str | None
    prefill: str
    todo_ids: list[int] = field(default_factory=list)
    tasks: list[TaskLine] = field(default_factory=list)
    fairies: dict[str, str] = field(default_factory=dict)  # other fairies: id → role
    fairy_modes: dict[str, str] = field(default_factory=dict)  # other fairies: id → mode
    project_status: str | None = None  # of the project the agent leads or works in
    free: list[str] | None = None  # fairies free to help, when the request names them
    self_id: str | None = None

    @property
    def action_names(self) -> list[str]:
        """The `_type`s the schema advertises, in its order."""
        if self.schema is None:
            return []
        return [n for n in map(variant_name, variants(self.schema)) if n]


def variants(schema: dict[str, Any]) -> list[dict[str, Any]]:
    """The action variants of a response schema (one per `_type`)."""
    items = schema.get("properties", {}).get("actions", {}).get("items", {})
    found = items.get("anyOf") or items.get("oneOf") or [items]
    return [v for v in found if isinstance(v, dict)]


def variant_name(variant: dict[str, Any]) -> str:
    const = (variant.get("properties", {}).get("_type") or {}).get("const")
    return const if isinstance(const, str) else ""


def json_values(text: str) -> list[tuple[int, Any]]:
    """Every top-level JSON object or array in free text, with the line it starts on."""
    out: list[tuple[int, Any]] = []
    for lineno, line in enumerate(text.splitlines()):
        i = 0
        while True:
            starts = [p for p in (line.find("{", i), line.find("[", i)) if p >= 0]
            if not starts:
                break
            i = min(starts)
            try:
                value, end = _DECODER.raw_decode(line, i)
            except ValueError:
                i += 1
                continue
            out.append((lineno, value))
            i = end
    return out


def _is_schema(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("properties"), dict)
        and "actions" in value["properties"]
    )


def _box(value: Any) -> Box | None:
    if not isinstance(value, dict):
        return None
    nums = [value.get(k) for k in ("x", "y", "w", "h")]
    if not all(isinstance(n, (int, float)) and not isinstance(n, bool) for n in nums):
        return None
    x, y, w, h = (float(n) for n in nums)  # type: ignore[arg-type]
    return Box(x, y, w, h) if w > 0 and h > 0 else None


def _shape_rows(value: Any) -> list[dict[str, Any]]:
    rows = value if isinstance(value, list) else [value]
    return [r for r in rows if isinstance(r, dict) and isinstance(r.get("shapeId"), str)]


def _bounds(user: str, values: list[tuple[int, Any]]) -> Box | None:
    """The task area if one is given, else the agent's own view (never the user's)."""
    lines = user.splitlines()
    task: Box | None = None
    view: Box | None = None
    for lineno, line in enumerate(lines):
        low = line.lower()
        boxes = [_box(v) for n, v in values if n == lineno and not _shape_rows(v)]
        boxes += [
            Box(*(float(g) for g in m.groups())) for m in _BOX_TEXT.finditer(line)
        ]  # "x=…, y=…, w=…, h=…"
        box = next((b for b in boxes if b is not None), None)
        if box is None or "not the area shown" in low:  # the user's view beside another
            continue
        if "task" in low and task is None:
            task = box
        elif "view" in low and view is None:
            view = box
    return task or view


def read_request(body: dict[str, Any]) -> RequestView:
    system_blocks = body.get("system") or []
    if isinstance(system_blocks, str):
        system = system_blocks
    else:
        system = "\n".join(str(b.get("text", "")) for b in system_blocks if isinstance(b, dict))
    user_parts: list[str] = []
    has_image = False
    prefill = ""
    for message in body.get("messages") or []:
        content = message.get("content")
        if message.get("role") == "assistant":
            prefill = content if isinstance(content, str) else ""
            continue
        if isinstance(content, str):
            user_parts.append(content)
            continue
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "image":
                has_image = True
            elif block.get("type") == "text":
                user_parts.append(str(block.get("text", "")))
    user = "\n".join(user_parts)
    schema = next((v for _, v in json_values(system) if _is_schema(v)), None)
    if schema is None:  # a prompt might carry it with the dynamic parts instead
        schema = next((v for _, v in json_values(user) if _is_schema(v)), None)
    values = json_values(user)
    shapes: dict[str, dict[str, Any]] = {}
    for _, value in values:
        for row in _shape_rows(value):
            shapes.setdefault(row["shapeId"], row)
    mode = next((m.group(1) or m.group(2) for m in [_MODE.search(system + "\n" + user)] if m), None)
    todo_ids = [int(m.group(1)) for m in re.finditer(r"^(\d+)\. \[", user, re.MULTILINE)]
    tasks: dict[str, TaskLine] = {}
    for line in user.splitlines():
        for m in _TASK.finditer(line):
            who = m.group(4).strip()
            box = _BOX_TEXT.search(line[m.end() :])
            tasks.setdefault(
                m.group(1),
                TaskLine(
                    m.group(1),
                    m.group(2),
                    m.group(3),
                    who.removeprefix("assigned to ").strip()
                    if who.startswith("assigned to")
                    else None,
                    Box(*(float(g) for g in box.groups())) if box else None,
                ),
            )
    fairies = {m.group(1): m.group(3) for m in _FAIRY.finditer(user)}
    free = next((m.group(1) for m in [_FREE.search(user)] if m), None)
    return RequestView(
        system=system,
        user=user,
        schema=schema,
        shapes=shapes,
        bounds=_bounds(user, values),
        has_screenshot=has_image,
        mode=mode,
        prefill=prefill,
        todo_ids=todo_ids,
        tasks=list(tasks.values()),
        fairies=fairies,
        fairy_modes={m.group(1): m.group(4) for m in _FAIRY.finditer(user)},
        project_status=next((m.group(1) for m in [_PROJECT.search(user)] if m), None),
        free=None if free is None else [f for f in re.split(r",\s*", free.strip()) if f != "none"],
        self_id=next((m.group(1) for m in [_SELF.search(user)] if m), None),
    )
