"""Two runs of one room creating the same id at once each get a shape of their own.

A run's create claims its id before its final version reaches the room's mirror (it is
still streaming, or its preview is held back by pacing). A second run asking for the same id
in that window must get another one: two creates of one id would leave one shape, and which
one depends on the order a browser applied the two sessions in.
"""

from __future__ import annotations

from typing import Any

from steward.actions.base import RunState
from steward.actions.registry import ACTIONS, Outcome, process
from steward.canvas.mirror import CanvasMirror
from steward.protocol.messages import WireAction


def _create(ctx: RunState, shape_id: str, x: float) -> Outcome:
    action: dict[str, Any] = {
        "_type": "create",
        "intent": "t",
        "shape": {"_type": "ellipse", "shapeId": shape_id, "x": x, "y": 0, "w": 100, "h": 100},
    }
    out = process(action, index=0, complete=True, incomplete_path=None, ctx=ctx, enabled=ACTIONS)
    assert out is not None
    return out


def _send(mirror: CanvasMirror, out: Outcome, session: str) -> None:
    for k, op in enumerate(out.ops):
        action = WireAction(id=f"{session}.{k}", name=op.name, params=op.params)
        mirror.apply_one(action, session=session)


def _run(mirror: CanvasMirror) -> RunState:
    return RunState(shapes=mirror.shapes, room_claims=mirror.claims)


def test_a_create_claimed_by_another_run_gets_a_fresh_id() -> None:
    mirror = CanvasMirror()
    a, b = _run(mirror), _run(mirror)
    first = _create(a, "d3-ellipse-1", x=0)
    second = _create(b, "d3-ellipse-1", x=500)  # before the first reached the mirror
    assert first.ops[0].params["id"] == "d3-ellipse-1"
    assert second.ops[0].params["id"] != "d3-ellipse-1"
    assert b.id_map["d3-ellipse-1"] == second.ops[0].params["id"]
    # Applied in either order, both shapes are there, each where its run put it.
    for order in ((first, second), (second, first)):
        canvas = CanvasMirror()
        for out, session in zip(order, ("s-a", "s-b"), strict=True):
            _send(canvas, out, session)
        assert sorted(s["x"] for s in canvas.shapes.values()) == [0.0, 500.0]


def test_a_claim_ends_when_its_create_reaches_the_mirror() -> None:
    mirror = CanvasMirror()
    out = _create(_run(mirror), "ring", x=0)
    assert mirror.claims == {"ring"}
    _send(mirror, out, "s-a")
    assert mirror.claims == set()
    # Taken by the shape itself now: a later run's create is still renamed.
    later = _create(_run(mirror), "ring", x=300)
    assert later.ops[0].params["id"] != "ring"
