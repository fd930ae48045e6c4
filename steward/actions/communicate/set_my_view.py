"""`setMyView`: move the fairy's own viewport (the users' cameras stay)."""

from __future__ import annotations

from typing import Any

from steward.actions.base import ActionModel, ActionSpec, RunState, Scheduled, WireOp
from steward.actions.communicate.areas import named_area, needs_box


class SetMyView(ActionModel):
    """What the model writes for `setMyView`: why, and the page area its own next view covers."""

    intent: str
    x: float
    y: float
    w: float
    h: float


def _resolve_view(data: dict[str, Any], ctx: RunState) -> list[WireOp]:
    box = named_area(data, ctx, "view")
    if box is None:
        return []
    # The fairy's own view moves (its next request looks there); the users' cameras stay.
    ctx.scheduled.append(Scheduled("view", str(data.get("intent") or "Look here."), box))
    return []


# Its system-prompt section (ActionSpec.guide); docs/PROMPT.md maps the kit's rules to it.
_SET_MY_VIEW = """Move your own viewport to x, y, w, h: to work on another part of the canvas, or
to zoom (a smaller box shows more detail, a larger one more of the canvas).
- Send nothing after it in the same reply: the next request shows the new view, and you continue
  from there."""

SET_MY_VIEW = ActionSpec(
    "setMyView",
    family="communicate",
    kind="talk",
    schema=SetMyView,
    description="Move your own viewport; you get a new look at the canvas afterwards.",
    guide=_SET_MY_VIEW,
    sanitize=needs_box,
    resolve=_resolve_view,
    continues=True,
)
