"""Lining shapes up (align, distribute, stack): the directions and the shared sanitize."""

from __future__ import annotations

from typing import Any

from steward.actions.arrange.targets import with_ids
from steward.actions.base import RunState
from steward.actions.sanitize import norm_enum, to_number

DIRECTIONS = ("horizontal", "vertical")
DIRECTION_ALIASES = {"row": "horizontal", "x": "horizontal", "column": "vertical", "y": "vertical"}


def sanitize_layout(key: str, allowed: tuple[str, ...], aliases: dict[str, str]) -> Any:
    """The sanitize of a line-up action: existing ids, `key` one of `allowed`, a bounded gap."""

    def fn(data: dict[str, Any], ctx: RunState) -> dict[str, Any] | None:
        out = with_ids(data, ctx)
        value = norm_enum(data.get(key), allowed, aliases)
        if out is None or value is None:
            return None
        gap = to_number(data.get("gap"), limit=10_000)
        return {**out, key: value, "gap": gap or 0.0}

    return fn
