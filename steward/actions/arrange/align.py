"""`align`: line shapes up on one edge or centre line."""

from __future__ import annotations

from typing import Any, Literal

from steward.actions.arrange.line_up import sanitize_layout
from steward.actions.arrange.mirror_diff import diff_ops
from steward.actions.arrange.targets import Ids, when_complete
from steward.actions.base import ActionSpec, RunState, WireOp

ALIGNMENTS = ("left", "center-horizontal", "right", "top", "center-vertical", "bottom")
ALIGN_ALIASES = {
    "center": "center-horizontal",
    "centre": "center-horizontal",
    "center-x": "center-horizontal",
    "horizontal-center": "center-horizontal",
    "middle": "center-vertical",
    "center-y": "center-vertical",
    "vertical-center": "center-vertical",
    "start": "left",
    "end": "right",
}


class Align(Ids):
    """What the model writes for `align`: the shapes, the edge or centre line to line them up on,
    and a gap."""

    alignment: Literal["left", "center-horizontal", "right", "top", "center-vertical", "bottom"]
    gap: float = 0


def _resolve_align(data: dict[str, Any], ctx: RunState) -> list[WireOp]:
    return diff_ops(ctx, "align", {"ids": data["_ids"], "alignment": data["alignment"]})


# Its system-prompt section (ActionSpec.guide); docs/PROMPT.md maps the kit's rules to it.
_ALIGN = """Line shapes up on one edge or centre line: left, center-horizontal, right, top,
center-vertical or bottom."""

ALIGN = ActionSpec(
    "align",
    family="arrange",
    kind="canvas",
    schema=Align,
    description="Align shapes to each other.",
    guide=_ALIGN,
    sanitize=when_complete(sanitize_layout("alignment", ALIGNMENTS, ALIGN_ALIASES)),
    resolve=_resolve_align,
)
