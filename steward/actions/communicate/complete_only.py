"""The sanitize of talk actions that act on complete versions only, as the model wrote them."""

from __future__ import annotations

from typing import Any

from steward.actions.base import RunState


def complete_only(
    data: dict[str, Any], ctx: RunState, index: int, complete: bool
) -> dict[str, Any] | None:
    """Complete versions only, as the model wrote them."""
    return data if complete else None
