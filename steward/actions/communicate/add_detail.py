"""`add-detail`: plan another pass to add detail."""

from __future__ import annotations

from typing import Any

from steward.actions.base import ActionModel, ActionSpec, RunState, Scheduled, WireOp
from steward.actions.communicate.complete_only import complete_only


class AddDetail(ActionModel):
    """What the model writes for `add-detail`: what the next pass should add."""

    intent: str


def _resolve_add_detail(data: dict[str, Any], ctx: RunState) -> list[WireOp]:
    text = str(data.get("intent") or "Add detail.")
    ctx.scheduled.append(Scheduled("add-detail", text))
    return [WireOp("add_detail", {"text": text})]


# Its system-prompt section (ActionSpec.guide); docs/PROMPT.md maps the kit's rules to it.
_ADD_DETAIL = """Plan another pass to add detail; you are called again with your intent and a fresh
view. Use it when the first pass is laid out and refinement is easier on top of it."""

ADD_DETAIL = ActionSpec(
    "add-detail",
    family="communicate",
    kind="talk",
    schema=AddDetail,
    description="Plan further work to add detail.",
    guide=_ADD_DETAIL,
    sanitize=complete_only,
    resolve=_resolve_add_detail,
    continues=True,
)
