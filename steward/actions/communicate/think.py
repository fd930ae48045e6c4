"""`think`: reason before and between actions (shown collapsed in the chat panel)."""

from __future__ import annotations

from typing import Any

from steward.actions.base import ActionModel, ActionSpec, RunState, WireOp
from steward.actions.communicate.complete_only import complete_only


class Think(ActionModel):
    """What the model writes for `think`: its reasoning, shown collapsed in the chat."""

    text: str


def _resolve_think(data: dict[str, Any], ctx: RunState) -> list[WireOp]:
    return [WireOp("think", {"text": str(data.get("text", ""))})]


# Its system-prompt section (ActionSpec.guide); docs/PROMPT.md maps the kit's rules to it.
_THINK = """Reason before and between actions; use it freely to work through each step.
- The users see your thoughts in the chat panel, collapsed under your messages: keep them about
  the work. A reply made only of thoughts tells the user nothing new. That is right after a review
  that found nothing to fix (your message before it closed the work); otherwise pair thoughts with
  a `message` or with work on the canvas."""

THINK = ActionSpec(
    "think",
    family="communicate",
    kind="talk",
    schema=Think,
    description="Describe your reasoning (shown to the users, collapsed, in the chat panel).",
    guide=_THINK,
    sanitize=complete_only,
    resolve=_resolve_think,
)
