"""Repairs for the mistakes models make in actions: coercion, clamps, enums and ids."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

from steward.canvas.styles import COLOR_ALIASES, COLORS, TEXT_ALIGN_ALIASES, TEXT_ALIGNS
from steward.protocol.limits import MAX_ID_CHARS

# Coordinates and sizes beyond this are model nonsense; clamp rather than break the canvas.
MAX_COORD = 1_000_000.0
MAX_SIZE = 100_000.0
MAX_TEXT = 10_000
_ID_BAD = re.compile(r"[^A-Za-z0-9_.:\-]+")


def to_number(value: Any, *, limit: float = MAX_COORD) -> float | None:
    """A finite number from a number or numeric string; NaN → None; ±Infinity/huge → clamp."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        text = value.strip().removesuffix("px").strip()
        try:
            value = float(text)
        except ValueError:
            return None
    if not isinstance(value, (int, float)):
        return None
    if math.isnan(value):
        return None
    return float(max(-limit, min(limit, value)))


def to_size(value: Any) -> float | None:
    n = to_number(value, limit=MAX_SIZE)
    return None if n is None else abs(n)


def to_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return value > 0
    if isinstance(value, str):
        return value.strip().lower() not in ("false", "0", "no", "off", "")
    return None


def to_text(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        value = str(value) if isinstance(value, (int, float)) else None
    return value[:MAX_TEXT] if value is not None else None


def _norm(value: str) -> str:
    return re.sub(r"[\s_]+", "-", value.strip().lower())


def norm_enum(
    value: Any, allowed: Iterable[str], aliases: Mapping[str, str] | None = None
) -> str | None:
    if not isinstance(value, str):
        return None
    v = _norm(value)
    allowed = tuple(allowed)
    if v in allowed:
        return v
    if aliases and v in aliases:
        return aliases[v]
    compact = v.replace("-", "")
    for a in allowed:
        if a.replace("-", "") == compact:
            return a
    return None


def norm_color(value: Any) -> str | None:
    return norm_enum(value, COLORS, COLOR_ALIASES)


def norm_text_align(value: Any) -> str | None:
    return norm_enum(value, TEXT_ALIGNS, TEXT_ALIGN_ALIASES)


def clean_id(value: Any) -> str | None:
    """A usable shape id from what the model wrote (no `shape:` prefix, safe characters)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(int(value)) if float(value).is_integer() else str(value)
    if not isinstance(value, str):
        return None
    v = value.strip().removeprefix("shape:")
    v = _ID_BAD.sub("-", v).strip("-")[:MAX_ID_CHARS]
    return v or None


def bump_id(sid: str) -> str:
    """The next candidate for a taken id: trailing number + 1, else `-1` appended."""
    m = re.search(r"(\d+)$", sid)
    if m:
        return sid[: m.start()] + str(int(m.group(1)) + 1)
    return f"{sid}-1"
