"""What may enter the canvas: the bounds every number of geometry keeps, and the checks a
user's relayed record passes before it is sequenced.

Geometry sums and multiplies coordinates and sizes; finite numbers near the float limit
(`x=1e308`, `w=1e308`) overflow to infinity there and then to NaN. So records and actions
enter the steward's canvas (the relay, the outbox replay, browsers' context replies, and
every envelope the mirror applies; a box a sender names is held to the same bounds by
`steward.protocol.messages.bounded_box`) only with every number finite and within:

- coordinates, offsets, points, angles and factors: |v| <= `MAX_COORD` (1e7, a thousand
  screens of 10,000 px in any direction);
- sizes (`props.w`, `props.h`): 0 <= v <= `MAX_SIZE` (1e6); a relayed record's are > 0.

`meta` is the app's own data, never geometry, and is not bounded. A relayed record (see
`relay_problem`) must besides be a shape of a known kind with only the fields of a shape
record, of bounded size, whose parent and arrow bindings name shapes that exist.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from steward.protocol.limits import MAX_COORD, MAX_SIZE

# A relayed record's shape: nesting (props.segments[i].points[j].x is 5 deep), how many
# JSON values it holds, and how long any string may be.
MAX_DEPTH = 6
MAX_VALUES = 20_000
MAX_STRING = 20_000
# tldraw's own shape kinds.
SHAPE_TYPES = frozenset(
    {
        "geo",
        "text",
        "note",
        "arrow",
        "line",
        "draw",
        "highlight",
        "frame",
        "group",
        "image",
        "video",
        "embed",
        "bookmark",
    }
)
_RECORD_KEYS = frozenset(
    {"id", "type", "x", "y", "rotation", "parentId", "bindings", "props", "meta", "typeName"}
)
_SIZES = ("w", "h")


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def geometry_problem(params: Mapping[str, Any]) -> str | None:
    """Why the numbers of a record or an action's params cannot enter geometry, or None."""
    stack: list[tuple[str, Any]] = [(k, v) for k, v in params.items() if k != "meta"]
    while stack:
        key, value = stack.pop()
        if isinstance(value, Mapping):
            stack.extend((f"{key}.{k}", v) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((f"{key}[]", v) for v in value)
        elif _is_number(value):
            if not math.isfinite(value):
                return f"{key} is not finite"
            if key in ("props.w", "props.h"):
                if not 0 <= value <= MAX_SIZE:
                    return f"{key}={value:g} outside 0..{MAX_SIZE:g}"
            elif abs(value) > MAX_COORD:
                return f"{key}={value:g} outside ±{MAX_COORD:g}"
    return None


def _shape_problem(record: Mapping[str, Any]) -> str | None:
    """Size and nesting of one JSON record."""
    stack: list[tuple[Any, int]] = [(record, 0)]
    count = 0
    while stack:
        value, depth = stack.pop()
        count += 1
        if count > MAX_VALUES:
            return f"more than {MAX_VALUES} values"
        if isinstance(value, str) and len(value) > MAX_STRING:
            return f"a string over {MAX_STRING} characters"
        if isinstance(value, (Mapping, list)):
            if depth >= MAX_DEPTH:
                return f"nested deeper than {MAX_DEPTH}"
            items = value.values() if isinstance(value, Mapping) else value
            stack.extend((v, depth + 1) for v in items)
    return None


def shape_id(raw: Any) -> str | None:
    """A relayed record's id without tldraw's `shape:` prefix; None if not a shape id."""
    if not isinstance(raw, str):
        return None
    sid = raw.removeprefix("shape:")
    return sid if sid and ":" not in sid else None


def relay_problem(record: Mapping[str, Any], exists: Callable[[str], bool]) -> str | None:
    """Why a user's relayed record may not be sequenced, or None. `exists(id)`: whether a
    shape of that id is (or is about to be) on the canvas."""
    unknown = sorted(set(record) - _RECORD_KEYS)
    if unknown:
        return f"unknown fields {unknown[:5]}"
    if record.get("typeName", "shape") != "shape":
        return "not a shape record"
    sid = shape_id(record.get("id"))
    if sid is None:
        return "id is not a shape id"
    kind = record.get("type")
    if not isinstance(kind, str) or kind not in SHAPE_TYPES:
        return f"unknown shape type {str(kind)[:32]!r}"
    if not _is_number(record.get("x")) or not _is_number(record.get("y")):
        return "x and y must be numbers"
    props = record.get("props")
    if not isinstance(props, Mapping):
        return "props must be an object"
    if "meta" in record and not isinstance(record["meta"], Mapping):
        return "meta must be an object"
    problem = _shape_problem(record) or geometry_problem(record)
    if problem is not None:
        return problem
    for size in _SIZES:
        if size in props and not (_is_number(props[size]) and props[size] > 0):
            return f"props.{size} must be a positive number"
    parent = record.get("parentId")
    if parent is not None:
        pid = shape_id(parent)
        if pid is None or pid == sid or not exists(pid):
            return f"parentId {str(parent)[:64]!r} is not a shape on the canvas"
    binds = record.get("bindings")
    if binds is not None:
        if kind != "arrow" or not isinstance(binds, Mapping) or set(binds) - {"start", "end"}:
            return "bindings are an arrow's {start, end}"
        for end, target in binds.items():
            tid = shape_id(target) if target is not None else None
            if target is not None and (tid is None or not exists(tid)):
                return f"bindings.{end} {str(target)[:64]!r} is not a shape on the canvas"
    return None
