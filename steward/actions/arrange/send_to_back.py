"""`sendToBack`: lower shapes beneath every other shape."""

from __future__ import annotations

from typing import Any

from steward.actions.arrange.targets import Ids, when_complete, with_ids
from steward.actions.base import ActionSpec, RunState, WireOp


def _resolve(data: dict[str, Any], ctx: RunState) -> list[WireOp]:
    return [WireOp("reorder", {"ids": data["_ids"], "to": "back"})]


# Its system-prompt section (ActionSpec.guide); docs/PROMPT.md maps the kit's rules to it.
_TO_BACK = """Lower shapes beneath every other shape (a background panel behind its content, for
instance)."""

SEND_TO_BACK = ActionSpec(
    "sendToBack",
    family="arrange",
    kind="canvas",
    schema=Ids,
    description="Send shapes to the back.",
    guide=_TO_BACK,
    sanitize=when_complete(with_ids),
    resolve=_resolve,
)
