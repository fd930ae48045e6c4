"""A shape's fields as the model wrote them, cleaned: each kind's own fields, each by its rule.

The fields a kind has are those of its SimpleShape model (what the model is shown and
what the response schema advertises). A field that fails its check, or that the kind does
not have, is dropped and reported: a create then falls back to the kind's default, an update
leaves that property as it was, and the reason goes back to the model as a note.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from steward.actions.sanitize import (
    norm_color,
    norm_text_align,
    to_bool,
    to_number,
    to_size,
    to_text,
)
from steward.canvas.simple import SIMPLE_SHAPE_MODELS, SimpleGeoShape
from steward.canvas.styles import COLORS, GEO_KINDS, MODEL_FILLS, model_fill

# What a check returns for a value it cannot use.
_BAD = object()
Check = Callable[[Any], Any]


def _or_bad(value: Any) -> Any:
    return _BAD if value is None else value


def _size(value: Any) -> Any:
    n = to_size(value)
    return n if n else _BAD  # zero or unreadable: the record would fall back to a default


def _as_is(value: Any) -> Any:
    return value  # ids and the kind: the action resolves them against the canvas


_NUMBER = (lambda v: _or_bad(to_number(v)), "is not a number")
_SIZE = (_size, "is not a positive size")
_TEXT = (lambda v: _or_bad(to_text(v)), "is not text")
CHECKS: dict[str, tuple[Check, str]] = {
    **dict.fromkeys(("x", "y", "x1", "y1", "x2", "y2", "bend"), _NUMBER),
    **dict.fromkeys(("w", "h", "width", "fontSize"), _SIZE),
    "color": (lambda v: _or_bad(norm_color(v)), f"is not a colour ({', '.join(COLORS)})"),
    "fill": (lambda v: _or_bad(model_fill(v)), f"is not a fill ({', '.join(MODEL_FILLS)})"),
    "textAlign": (lambda v: _or_bad(norm_text_align(v)), "is not start, middle or end"),
    "text": _TEXT,
    "note": _TEXT,
    "wrap": (lambda v: _or_bad(to_bool(v)), "is not true or false"),
    **dict.fromkeys(("_type", "shapeId", "fromId", "toId", "subType"), (_as_is, "")),
}


def _fields_by_kind() -> dict[str, frozenset[str]]:
    out: dict[str, frozenset[str]] = {}
    for model in SIMPLE_SHAPE_MODELS:
        names = frozenset(f.alias or name for name, f in model.model_fields.items())
        if model is SimpleGeoShape:
            out.update(dict.fromkeys(GEO_KINDS, names))
        else:
            kind = model.model_fields["type_"].annotation.__args__[0]  # type: ignore[union-attr]
            out[str(kind)] = names
    return out


FIELDS: dict[str, frozenset[str]] = _fields_by_kind()


def clean_fields(kind: str, fields: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The usable fields of a `kind` shape, and why each other one was dropped."""
    known = FIELDS.get(kind, frozenset())
    clean: dict[str, Any] = {}
    dropped: list[str] = []
    for key, value in fields.items():
        if key not in known or key not in CHECKS:
            dropped.append(f"a {kind} has no field {key[:40]!r}")
            continue
        check, why = CHECKS[key]
        got = check(value)
        if got is _BAD:
            dropped.append(f"{key} {_show(value)} {why}")
        else:
            clean[key] = got
    return clean, dropped


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
