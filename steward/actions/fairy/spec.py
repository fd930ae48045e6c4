"""How a fairy action's spec is built: complete versions only, areas brought to the page,
no wire ops, and its effect."""

from __future__ import annotations

from typing import Any

from steward.actions.base import ActionModel, ActionSpec, RunState, WireOp
from steward.actions.fairy_port import ActionEffect


def complete_only(
    data: dict[str, Any], ctx: RunState, index: int, complete: bool
) -> dict[str, Any] | None:
    """Complete versions only, areas taken from the model's coordinates to the page's: the
    page's under `_x`, `_y` (what the effect uses), the model's kept as written (what the
    history echoes, in the frame of the request that wrote it)."""
    if not complete:
        return None
    out = dict(data)
    for key, to_page in (("x", ctx.coords.x_from_model), ("y", ctx.coords.y_from_model)):
        v = out.get(key)
        if isinstance(v, bool) or not isinstance(v, (int, float, str)):
            continue
        try:
            out[f"_{key}"] = to_page(float(v))
        except ValueError:
            continue  # not a number: the effect says so (`number_field`)
    return out


def no_ops(data: dict[str, Any], ctx: RunState) -> list[WireOp]:
    """Fairy actions never change the canvas."""
    return []


def fairy_spec(
    name: str,
    schema: type[ActionModel],
    description: str,
    guide: str,
    effect: ActionEffect,
    *,
    plans: bool = False,
) -> ActionSpec:
    """The spec of a fairy action: its own schema, guide and effect on the shared rest."""
    return ActionSpec(
        name,
        family="fairy",
        kind="fairy",
        schema=schema,
        description=description,
        guide=guide,
        sanitize=complete_only,
        resolve=no_ops,
        effect=effect,
        plans=plans,
    )
