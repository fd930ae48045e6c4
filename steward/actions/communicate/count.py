"""`count`: count the shapes of one kind; the answer comes as data next request."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from steward.actions.base import ActionModel, ActionSpec, RunState, Scheduled, WireOp
from steward.actions.communicate.complete_only import complete_only
from steward.canvas.simple import model_type


class Count(ActionModel):
    """What the model writes for `count`: which kind of shape to count (the answer comes next
    request)."""

    expression: str = Field(description="A shape _type to count, or 'all'")


def _resolve_count(data: dict[str, Any], ctx: RunState) -> list[WireOp]:
    expr = str(data.get("expression") or "all").strip().lower()
    if expr in ("all", "*", "shapes", ""):
        n = len(ctx.shapes)
    else:
        n = sum(1 for s in ctx.shapes.values() if model_type(s) == expr or s.get("type") == expr)
    ctx.scheduled.append(Scheduled("data", f"count({expr}) = {n}"))
    return []


# Its system-prompt section (ActionSpec.guide); docs/PROMPT.md maps the kit's rules to it.
_COUNT = """Count the shapes of one `_type` (or `all`). The answer comes as data in the next
request, so end your reply after asking; independent lookups can go in one reply. If a lookup
fails, tell the user rather than asking again."""

COUNT = ActionSpec(
    "count",
    family="communicate",
    kind="talk",
    schema=Count,
    description="Count shapes; the answer arrives as data.",
    guide=_COUNT,
    sanitize=complete_only,
    resolve=_resolve_count,
    continues=True,
)
