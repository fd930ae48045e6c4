"""`unknown`: the catch-all for anything not covered; no mode offers it, and it is ignored."""

from __future__ import annotations

from typing import Any

from steward.actions.base import ActionModel, ActionSpec, RunState, WireOp
from steward.actions.communicate.complete_only import complete_only


class Unknown(ActionModel):
    """Whatever the model wrote under a name no action has: kept only so it can be ignored with a
    note."""

    intent: str = ""


def _resolve_unknown(data: dict[str, Any], ctx: RunState) -> list[WireOp]:
    ctx.notes.append(f"ignored unknown action {str(data.get('_type'))[:40]!r}")
    return []


UNKNOWN = ActionSpec(
    "unknown",
    family="communicate",
    kind="talk",
    schema=Unknown,
    description="Anything not covered (ignored).",
    guide="",
    sanitize=complete_only,
    resolve=_resolve_unknown,
    offered=False,
)
