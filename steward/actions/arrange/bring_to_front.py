"""`bringToFront`: raise shapes above every other shape."""

from __future__ import annotations

from typing import Any

from steward.actions.arrange.targets import Ids, when_complete, with_ids
from steward.actions.base import ActionSpec, RunState, WireOp


def _resolve(data: dict[str, Any], ctx: RunState) -> list[WireOp]:
    return [WireOp("reorder", {"ids": data["_ids"], "to": "front"})]


# Its system-prompt section (ActionSpec.guide); docs/PROMPT.md maps the kit's rules to it.
_TO_FRONT = """Raise shapes above every other shape (a marker or label that must show over what it
sits on, for instance)."""

BRING_TO_FRONT = ActionSpec(
    "bringToFront",
    family="arrange",
    kind="canvas",
    schema=Ids,
    description="Bring shapes to the front.",
    guide=_TO_FRONT,
    sanitize=when_complete(with_ids),
    resolve=_resolve,
)
