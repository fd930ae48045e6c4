"""Reading a fairy action's fields: bounded text, numbers, a sane area."""

from __future__ import annotations

from typing import Any

from steward.actions.mistakes import FairyMistake
from steward.protocol.box import Box

# Smallest sensible task area: a model asking for less gets this much.
MIN_TASK_SIDE = 50.0


def text_field(data: dict[str, Any], key: str, default: str = "") -> str:
    """A text field, stripped and bounded, or `default`."""
    v = data.get(key)
    return v.strip()[:2000] if isinstance(v, str) else default


def number_field(data: dict[str, Any], key: str) -> float:
    """A number field; anything else is the model's mistake."""
    v = data.get(key)
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        raise FairyMistake(f'"{key}" must be a number.')
    try:
        return float(v)
    except ValueError as e:
        raise FairyMistake(f'"{key}" must be a number.') from e


def area_field(data: dict[str, Any]) -> Box:
    """A task's or flight's area on the page, made sane (positive, not tiny): its corner as
    the sanitizer brought it to the page (`_x`, `_y`), else as written."""
    x, y, w, h = (number_field(data, f"_{k}" if f"_{k}" in data else k) for k in "xywh")
    return Box(x, y, max(w, MIN_TASK_SIDE), max(h, MIN_TASK_SIDE))
