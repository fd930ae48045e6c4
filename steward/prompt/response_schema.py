"""The response JSON schema, built from the enabled actions only."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from pydantic.json_schema import models_json_schema

from steward.actions.registry import select
from steward.canvas.styles import COLORS

_COLOR_ENUM = list(COLORS)


def _strip_titles(node: Any) -> Any:
    """Compact the schema: no titles or defaults, `T | null` → `T`, one shared colour enum."""
    if isinstance(node, dict):
        any_of = node.get("anyOf")
        if isinstance(any_of, list) and len(any_of) == 2 and {"type": "null"} in any_of:
            inner = next(x for x in any_of if x != {"type": "null"})
            extra = {k: v for k, v in node.items() if k not in ("anyOf", "default", "title")}
            return _strip_titles({**inner, **extra})
        if node.get("enum") == _COLOR_ENUM:
            return {"$ref": "#/$defs/Color"}
        out = {k: _strip_titles(v) for k, v in node.items() if k not in ("title", "default")}
        props = node.get("properties")
        if isinstance(props, dict):  # a field may be called `title`: keep every field
            out["properties"] = {k: _strip_titles(v) for k, v in props.items()}
        return out
    if isinstance(node, list):
        return [_strip_titles(v) for v in node]
    return node


def response_schema(action_names: Iterable[str]) -> dict[str, Any]:
    specs = list(select(action_names).values())
    _, top = models_json_schema(
        [(s.schema, "validation") for s in specs], ref_template="#/$defs/{model}"
    )
    # A model's class docstring is written for maintainers; the model is taught by each
    # action's one-line description, its guide and the fields' own descriptions.
    defs: dict[str, Any] = {
        name: {k: v for k, v in node.items() if k != "description"}
        for name, node in top.get("$defs", {}).items()
    }
    variants = []
    for spec in specs:
        # Read, not pop: actions may share one schema class (bringToFront and sendToBack).
        base = _strip_titles(defs.get(spec.schema.__name__, {}))
        props = {"_type": {"type": "string", "const": spec.name}, **base.get("properties", {})}
        variants.append(
            {
                "title": spec.name,
                "description": spec.description,
                "type": "object",
                "properties": props,
                "required": ["_type", *base.get("required", [])],
                "additionalProperties": False,
            }
        )
    for spec in specs:
        defs.pop(spec.schema.__name__, None)  # inlined above
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {"actions": {"type": "array", "items": {"anyOf": variants}}},
        "required": ["actions"],
    }
    defs = _strip_titles(dict(sorted(defs.items())))
    if "#/$defs/Color" in json.dumps([schema, defs]):
        defs["Color"] = {"type": "string", "enum": _COLOR_ENUM}
    if defs:
        schema["$defs"] = dict(sorted(defs.items()))
    return schema
