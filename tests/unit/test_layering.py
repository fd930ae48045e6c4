"""Z-order relative to a shape: `reorder` behind / in front of a target on the wire, and the
`sendBackward` / `bringForward` actions that step past the nearest overlapping shape or place
shapes by a named one, within a drone's task bounds."""

from __future__ import annotations

from typing import Any

from steward.actions.base import RunState
from steward.actions.registry import ACTIONS, process
from steward.canvas.apply import apply_wire_action
from steward.protocol.box import Box
from steward.protocol.messages import WireAction
from steward.turns.bounds_guard import BoundsGuard


def _box(sid: str, x: float, y: float, w: float = 100, h: float = 100) -> dict[str, Any]:
    return {"id": sid, "type": "geo", "x": x, "y": y, "rotation": 0.0, "props": {"w": w, "h": h}}


def _canvas() -> dict[str, dict[str, Any]]:
    # back to front: sky (big), a (left), far (far right, overlaps nothing), b (on a), c (on b)
    return {
        "sky": _box("sky", 0, 0, 1000, 600),
        "a": _box("a", 100, 100),
        "far": _box("far", 2000, 0),
        "b": _box("b", 150, 150),
        "c": _box("c", 180, 180),
    }


def _act(shapes: dict[str, dict[str, Any]], **action: Any) -> list[WireAction]:
    ctx = RunState(shapes=shapes)
    out = process(action, index=0, complete=True, incomplete_path=None, ctx=ctx, enabled=ACTIONS)
    if out is None:
        return []
    wire = [WireAction(id=f"w{i}", name=op.name, params=op.params) for i, op in enumerate(out.ops)]
    for w in wire:
        apply_wire_action(shapes, w)
    return wire


def test_reorder_behind_and_in_front_of_a_target() -> None:
    shapes = _canvas()
    apply_wire_action(
        shapes,
        WireAction(
            id="1", name="reorder", params={"ids": ["c", "far"], "to": "behind", "target": "a"}
        ),
    )
    assert list(shapes) == ["sky", "far", "c", "a", "b"]
    apply_wire_action(
        shapes,
        WireAction(
            id="2", name="reorder", params={"ids": ["sky"], "to": "in_front", "target": "b"}
        ),
    )
    assert list(shapes) == ["far", "c", "a", "b", "sky"]
    before = list(shapes)
    for target in ("nope", "sky", None):
        apply_wire_action(
            shapes,
            WireAction(
                id="3", name="reorder", params={"ids": ["sky"], "to": "behind", "target": target}
            ),
        )
    assert list(shapes) == before


def test_send_backward_steps_past_the_nearest_overlapping_shape() -> None:
    shapes = _canvas()
    # c overlaps b (just behind it) and a; it goes just behind b, not behind "far".
    wire = _act(shapes, _type="sendBackward", intent="x", shapeIds=["c"])
    assert wire[0].params == {"ids": ["c"], "to": "behind", "target": "b"}
    assert list(shapes) == ["sky", "a", "far", "c", "b"]
    # a step further: past "far" (no overlap) to just behind a
    _act(shapes, _type="sendBackward", intent="x", shapeIds=["c"])
    assert list(shapes) == ["sky", "c", "a", "far", "b"]


def test_bring_forward_and_a_named_reference() -> None:
    shapes = _canvas()
    _act(shapes, _type="bringForward", intent="x", shapeIds=["a"])
    assert list(shapes) == ["sky", "far", "b", "a", "c"]
    _act(shapes, _type="sendBackward", intent="x", shapeIds=["c"], referenceShapeId="sky")
    assert list(shapes) == ["c", "sky", "far", "b", "a"]
    _act(shapes, _type="bringForward", intent="x", shapeIds=["c"], referenceShapeId="far")
    assert list(shapes) == ["sky", "far", "c", "b", "a"]


def test_nothing_to_pass_or_an_unknown_reference_sends_nothing_and_says_why() -> None:
    shapes = _canvas()
    ctx = RunState(shapes=shapes)
    for action in (
        {"_type": "bringForward", "intent": "x", "shapeIds": ["far"]},
        {"_type": "sendBackward", "intent": "x", "shapeIds": ["a"], "referenceShapeId": "ghost"},
        {"_type": "sendBackward", "intent": "x", "shapeIds": ["a"], "referenceShapeId": "a"},
    ):
        out = process(
            action, index=0, complete=True, incomplete_path=None, ctx=ctx, enabled=ACTIONS
        )
        assert out is None or not out.ops
    assert len(ctx.notes) == 3 and "nothing changed" in ctx.notes[0] and "'ghost'" in ctx.notes[1]


def test_a_drone_may_place_its_shape_behind_another_tasks_shape_but_not_move_that_one() -> None:
    shapes = _canvas()
    guard = BoundsGuard(Box(90, 90, 250, 250))  # holds a, b and c, not sky or far
    mine = WireAction(
        id="m", name="reorder", params={"ids": ["c"], "to": "behind", "target": "sky"}
    )
    theirs = WireAction(
        id="t", name="reorder", params={"ids": ["sky"], "to": "in_front", "target": "c"}
    )
    verdict = guard.check([mine, theirs], shapes)
    assert [a.id for a in verdict.actions] == ["m"]
    assert [r[0] for r in verdict.refused] == ["t"]
