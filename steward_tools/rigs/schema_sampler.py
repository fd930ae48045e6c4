"""Values drawn from a JSON schema, filled in the way a model reading the prompt would.

Covers what the response schemas use: `$ref`, `anyOf`/`oneOf`, `const`, `enum`, objects
(required and optional properties, free-form objects), arrays, strings, numbers, integers,
booleans and bounds keywords. Field names the schema shows carry their usual meaning: ids
(`shapeId`, `shapeIds`, `fromId`, `toId`, …) come from the shapes the request listed (a few
new ones for creates), x/y/w/h and friends land inside the bounds the request gave. Randomness
comes from a `random.Random`, so a seed reproduces a draw, and hypothesis can drive one
(`st.randoms()`) to shrink a failure.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from steward.protocol.box import Box

_WORDS = ("plan", "box", "flow", "step", "note", "idea", "start", "end", "user", "data", "ok")
_REF_FIELDS = frozenset({"shapeId", "referenceShapeId", "fromId", "toId", "parentId"})
_X = frozenset({"x", "x1", "x2", "originX"})
_Y = frozenset({"y", "y1", "y2", "originY"})
_FREE_FIELDS = ("color", "text", "fill", "w", "h")
MAX_DEPTH = 12


@dataclass
class Knowledge:
    """What the request told the sampler: shapes it may refer to, where it may draw, and the
    other ids it named (tasks, fairies, todo items)."""

    shape_ids: list[str] = field(default_factory=list)
    bounds: Box = field(default_factory=lambda: Box(0, 0, 800, 600))
    task_ids: list[str] = field(default_factory=list)
    fairy_ids: list[str] = field(default_factory=list)
    todo_ids: list[int] = field(default_factory=list)
    created: list[str] = field(default_factory=list)  # ids this response created so far


class SchemaSampler:
    """Draws values from a JSON schema, using what the request showed for ids and areas."""

    def __init__(self, schema: dict[str, Any], rng: random.Random, know: Knowledge) -> None:
        self.root = schema
        self.rng = rng
        self.know = know

    # -- schema walking ----------------------------------------------------------------
    def _resolve(self, node: dict[str, Any]) -> dict[str, Any]:
        seen = 0
        while "$ref" in node and seen < MAX_DEPTH:
            path = str(node["$ref"]).lstrip("#/").split("/")
            target: Any = self.root
            for part in path:
                target = target.get(part, {}) if isinstance(target, dict) else {}
            extra = {k: v for k, v in node.items() if k != "$ref"}
            node = {**target, **extra}
            seen += 1
        return node

    def value(self, node: dict[str, Any], name: str = "", depth: int = 0) -> Any:
        node = self._resolve(node)
        if "const" in node:
            return node["const"]
        if "enum" in node:
            return self.rng.choice(list(node["enum"]))
        options = node.get("anyOf") or node.get("oneOf")
        if options:
            return self.value(self.rng.choice(options), name, depth + 1)
        kind = node.get("type")
        if isinstance(kind, list):
            kind = self.rng.choice([k for k in kind if k != "null"] or kind)
        if kind == "object" or "properties" in node:
            return self._object(node, name, depth)
        if kind == "array":
            return self._array(node, name, depth)
        if kind == "string":
            return self._string(node, name)
        if kind == "integer":
            return self._integer(node, name)
        if kind == "number":
            return self._number(node, name)
        if kind == "boolean":
            return self.rng.random() < 0.5
        if kind == "null":
            return None
        return self._string(node, name)

    def _object(self, node: dict[str, Any], name: str, depth: int) -> dict[str, Any]:
        props: dict[str, Any] = node.get("properties") or {}
        required = set(node.get("required") or [])
        if not props:
            return self._free_object(name)
        keys = [k for k in props if k in required or self.rng.random() < 0.5]
        if depth >= MAX_DEPTH:
            keys = [k for k in props if k in required]
        out: dict[str, Any] = {}
        if {"x", "y", "w", "h"} <= set(keys):
            out.update(self._box_inside())
        for key in keys:
            if key in out:
                continue
            out[key] = self._field(props[key], key, name, depth)
        return out

    def _field(self, node: dict[str, Any], key: str, parent: str, depth: int) -> Any:
        resolved = self._resolve(node)
        if "const" in resolved or "enum" in resolved:
            return self.value(resolved, key, depth + 1)
        if key == "shapeId" and parent == "shape":
            return self._fresh_id()
        if key in _REF_FIELDS:
            return self._shape_ref()
        if key in ("taskId",):
            return self._pick(self.know.task_ids) or self._fresh_id("t")
        if key in ("fairyId", "assignee"):
            return self._pick(self.know.fairy_ids) or self._fresh_id("f")
        if key == "id" and resolved.get("type") == "integer":
            return self._pick(self.know.todo_ids) or self.rng.randint(1, 5)
        if key == "color" and "enum" not in resolved:
            colors = ((self.root.get("$defs") or {}).get("Color") or {}).get("enum")
            return self.rng.choice(colors) if colors else "black"
        return self.value(node, key, depth + 1)

    def _free_object(self, name: str) -> dict[str, Any]:
        """A free-form object (e.g. an update): a shape it was shown plus a few fields."""
        out: dict[str, Any] = {"shapeId": self._shape_ref()}
        for key in self.rng.sample(_FREE_FIELDS, self.rng.randint(1, 2)):
            if key == "color":
                out[key] = self._field({"type": "string"}, "color", name, 0)
            elif key == "fill":
                out[key] = self.rng.choice(["none", "tint", "solid", "pattern"])
            elif key == "text":
                out[key] = self._words()
            else:
                out[key] = self._number({"type": "number"}, key)
        return out

    def _array(self, node: dict[str, Any], name: str, depth: int) -> list[Any]:
        items = node.get("items") or {}
        lo = int(node.get("minItems", 0))
        hi = int(node.get("maxItems", lo + 4))
        if name == "shapeIds":
            pool = self.know.shape_ids + self.know.created
            if not pool:
                return [self._fresh_id() for _ in range(lo)]
            n = self.rng.randint(max(lo, 1), max(lo, 1, min(hi, len(pool))))
            return self.rng.sample(pool, min(n, len(pool)))
        if name == "taskIds":
            return self.rng.sample(self.know.task_ids, self.rng.randint(0, len(self.know.task_ids)))
        if name == "points":
            lo = max(lo, 2)
        if depth >= MAX_DEPTH:
            return []
        n = self.rng.randint(lo, max(lo, hi))
        return [self.value(items, name.rstrip("s"), depth + 1) for _ in range(n)]

    def _string(self, node: dict[str, Any], name: str) -> str:
        lo = int(node.get("minLength", 0))
        hi = int(node.get("maxLength", 60))
        text = self._words()
        while len(text) < lo:
            text += " " + self._words()
        return text[:hi]

    def _integer(self, node: dict[str, Any], name: str) -> int:
        return round(self._number(node, name))

    def _number(self, node: dict[str, Any], name: str) -> float:
        b = self.know.bounds
        if name in _X:
            value = self.rng.uniform(b.x, b.x + b.w)
        elif name in _Y:
            value = self.rng.uniform(b.y, b.y + b.h)
        elif name in ("w", "width"):
            value = self.rng.uniform(20, max(20.0, b.w / 2))
        elif name in ("h", "height"):
            value = self.rng.uniform(20, max(20.0, b.h / 2))
        elif name == "degrees":
            value = self.rng.uniform(-180, 180)
        elif name.startswith("scale"):
            value = self.rng.uniform(0.5, 1.5)
        else:
            value = self.rng.uniform(0, 60)
        lo = node.get("minimum", node.get("exclusiveMinimum"))
        hi = node.get("maximum", node.get("exclusiveMaximum"))
        if isinstance(lo, (int, float)):
            value = max(value, float(lo) + (1 if "exclusiveMinimum" in node else 0))
        if isinstance(hi, (int, float)):
            value = min(value, float(hi) - (1 if "exclusiveMaximum" in node else 0))
        return float(round(value))  # models write integers, as the prompt asks

    # -- filling in what the request said ----------------------------------------------
    def _box_inside(self) -> dict[str, float]:
        b = self.know.bounds
        w = float(round(self.rng.uniform(min(20.0, b.w), max(20.0, b.w / 2))))
        h = float(round(self.rng.uniform(min(20.0, b.h), max(20.0, b.h / 2))))
        w, h = min(w, b.w), min(h, b.h)
        x = float(round(self.rng.uniform(b.x, b.x + b.w - w)))
        y = float(round(self.rng.uniform(b.y, b.y + b.h - h)))
        return {"x": x, "y": y, "w": w, "h": h}

    def _fresh_id(self, prefix: str = "s") -> str:
        new = f"{prefix}{self.rng.randrange(16**6):06x}"
        if prefix == "s":
            self.know.created.append(new)
        return new

    def _shape_ref(self) -> str:
        pool = self.know.shape_ids + self.know.created
        return self._pick(pool) or self._fresh_id()

    def _pick(self, pool: list[Any]) -> Any:
        return self.rng.choice(pool) if pool else None

    def _words(self) -> str:
        return " ".join(self.rng.choice(_WORDS) for _ in range(self.rng.randint(1, 4)))
