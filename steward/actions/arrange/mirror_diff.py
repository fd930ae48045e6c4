"""What an arrange action sends: the `update_shape` ops that take the mirror to its preview."""

from __future__ import annotations

from steward.actions.base import RunState, WireOp
from steward.actions.convert import record_diff


def diff_ops(ctx: RunState, ops: list[WireOp]) -> list[WireOp]:
    """`update_shape` ops for every shape `ops` change on a preview of the mirror."""
    after = ctx.preview(ops)
    out = []
    for sid, new in after.items():
        old = ctx.shapes.get(sid)
        if old is not None and old != new:
            params = record_diff(old, new)
            if len(params) > 1:
                out.append(WireOp("update_shape", params))
    return out
