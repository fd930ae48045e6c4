"""A shape's fields as the model wrote them, brought to the page (create and update)."""

from __future__ import annotations

from typing import Any

from steward.actions.base import RunState
from steward.actions.fields import clean_fields


def to_page(
    kind: str, shape: dict[str, Any], ctx: RunState, note: str | None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The kind's clean fields with the model's offset and rounding undone, and the same
    clean fields in the model's frame (what the history echoes: what is applied, as the
    model writes it); each dropped field becomes a note prefixed by `note` (None while the
    action is still streaming)."""
    fields, dropped = clean_fields(kind, shape)
    if note is not None:
        ctx.notes.extend(f"{note}: {why}" for why in dropped)
    return ctx.coords.shape_from_model(fields), fields
