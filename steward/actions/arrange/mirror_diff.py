"""What an arrange action sends: the `update_shape` ops that take the mirror to its preview."""

from __future__ import annotations

from typing import Any

from steward.actions.base import RunState, WireOp
from steward.actions.convert import record_diff
from steward.canvas.apply import LayoutVerb


def diff_ops(ctx: RunState, verb: LayoutVerb, params: dict[str, Any]) -> list[WireOp]:
    """`update_shape` ops for every shape the layout verb changes on a preview of the mirror
    (layout verbs are not on the wire: browsers get the records they produce)."""
    after = ctx.preview_layout(verb, params)
    out = []
    for sid, new in after.items():
        old = ctx.shapes.get(sid)
        if old is not None and old != new:
            params = record_diff(old, new)
            if len(params) > 1:
                out.append(WireOp("update_shape", params))
    return out
