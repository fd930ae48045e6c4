"""The numeric guard at the canvas boundary and the relay's record checks."""

from __future__ import annotations

from typing import Any

import pytest

from steward.canvas.guard import MAX_COORD, MAX_SIZE, geometry_problem, relay_problem
from steward.canvas.mirror import CanvasMirror
from steward.protocol.messages import WireAction


def _shape(sid: str = "a", **over: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "id": sid,
        "type": "geo",
        "x": 1.0,
        "y": 2.0,
        "rotation": 0.0,
        "parentId": None,
        "props": {"geo": "rectangle", "w": 10.0, "h": 10.0},
    }
    record.update(over)
    return record


def test_bounds_are_inclusive_and_meta_is_not_geometry() -> None:
    assert geometry_problem(_shape(x=MAX_COORD, y=-MAX_COORD)) is None
    assert geometry_problem(_shape(props={"w": MAX_SIZE, "h": 0})) is None
    assert geometry_problem(_shape(meta={"createdAt": 1.7e12})) is None
    assert geometry_problem(_shape(x=MAX_COORD * 1.01)) == "x=1.01e+07 outside ±1e+07"
    assert geometry_problem(_shape(props={"w": 1e308, "h": 1})) is not None
    assert geometry_problem({"ids": ["a"], "dx": 1e300, "dy": 0}) is not None
    assert geometry_problem({"points": [{"x": float("nan")}]}) == "points[].x is not finite"


@pytest.mark.parametrize(
    ("record", "why"),
    [
        (_shape(typeName="binding"), "not a shape record"),
        (_shape("page:p"), "id is not a shape id"),
        (_shape(type="page"), "unknown shape type 'page'"),
        (_shape(type=["geo"]), "unknown shape type \"['geo']\""),
        (_shape(index="a1"), "unknown fields ['index']"),
        (_shape(props={"w": 0, "h": 1}), "props.w must be a positive number"),
        (_shape(parentId="gone"), "parentId 'gone' is not a shape on the canvas"),
        (_shape(parentId="a"), "parentId 'a' is not a shape on the canvas"),
        (_shape(bindings={"start": "b", "end": None}), "bindings are an arrow's {start, end}"),
        (
            _shape(type="arrow", bindings={"start": "gone", "end": None}),
            "bindings.start 'gone' is not a shape on the canvas",
        ),
        (_shape(props={"w": 1, "h": 1, "a": [[[[[[1]]]]]]}), "nested deeper than 6"),
        (_shape(props={"w": 1, "h": 1, "text": "x" * 20_001}), "a string over 20000 characters"),
    ],
)
def test_the_relay_refuses_with_a_reason(record: dict[str, Any], why: str) -> None:
    assert relay_problem(record, lambda sid: sid in {"b", "a"} and sid != "a") == why


def test_the_relay_takes_what_a_browser_sends() -> None:
    arrow = _shape(
        "shape:arr",
        type="arrow",
        parentId="shape:frame",
        bindings={"start": "shape:box", "end": None},
        props={"start": {"x": 0, "y": 0}, "end": {"x": 9, "y": 9}, "bend": 0},
    )
    assert relay_problem(arrow, lambda sid: sid in {"frame", "box"}) is None


def test_the_mirror_leaves_out_what_geometry_cannot_take() -> None:
    mirror = CanvasMirror()
    bad = WireAction(id="1", name="create_shape", params=_shape("huge", x=1e308))
    good = WireAction(id="2", name="create_shape", params=_shape("ok"))
    mirror.apply([bad, good])
    assert list(mirror.shapes) == ["ok"] and mirror.refused == 1
    assert mirror.load([_shape("x", props={"w": 1e308, "h": 1}), _shape("y")]) == 1
