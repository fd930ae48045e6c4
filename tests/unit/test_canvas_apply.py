"""The reference wire verbs, the layout verbs the steward previews, and the mirror's
partial-action semantics."""

from __future__ import annotations

import copy
import math
from typing import Any

import pytest

from steward.canvas.apply import apply_layout, apply_wire_action
from steward.canvas.bounds import shape_bounds
from steward.canvas.mirror import CanvasMirror
from steward.protocol.messages import WireAction


def box(sid: str, x: float, y: float, w: float = 100, h: float = 50) -> dict[str, Any]:
    return {
        "id": sid,
        "type": "geo",
        "x": x,
        "y": y,
        "rotation": 0.0,
        "props": {"geo": "rectangle", "w": w, "h": h},
    }


def act(name: str, aid: str = "a1", **params: Any) -> WireAction:
    return WireAction(id=aid, name=name, params=params)  # type: ignore[arg-type]


def canvas() -> dict[str, dict[str, Any]]:
    return {s["id"]: s for s in (box("a", 0, 0), box("b", 300, 100), box("c", 100, 400, 50, 50))}


def test_create_update_delete_and_bindings() -> None:
    shapes = canvas()
    apply_wire_action(
        shapes,
        act(
            "create_shape",
            id="arr",
            type="arrow",
            x=100,
            y=25,
            props={"start": {"x": 0, "y": 0}, "end": {"x": 200, "y": 100}},
            bindings={"start": "a", "end": "b"},
        ),
    )
    assert list(shapes) == ["a", "b", "c", "arr"]
    apply_wire_action(shapes, act("update_shape", id="a", x=10, props={"color": "red", "h": None}))
    assert shapes["a"]["x"] == 10 and shapes["a"]["props"] == {
        "geo": "rectangle",
        "w": 100,
        "color": "red",
    }
    apply_wire_action(shapes, act("delete_shape", ids=["b", "missing"]))
    assert "b" not in shapes
    assert shapes["arr"]["bindings"] == {"start": "a", "end": None}


def test_move_resize_rotate() -> None:
    shapes = canvas()
    apply_layout(shapes, "move", dict(ids=["a", "b"], dx=5, dy=-5))
    assert (shapes["a"]["x"], shapes["a"]["y"], shapes["b"]["x"]) == (5, -5, 305)
    apply_layout(shapes, "resize", dict(ids=["c"], scaleX=2, scaleY=0.5, originX=100, originY=400))
    assert shapes["c"]["props"]["w"] == 100 and shapes["c"]["props"]["h"] == 25
    apply_layout(shapes, "rotate", dict(ids=["c"], angle=math.pi / 2, originX=100, originY=300))
    assert math.isclose(shapes["c"]["x"], 0.0, abs_tol=1e-9)
    assert math.isclose(shapes["c"]["y"], 300.0, abs_tol=1e-9)
    assert math.isclose(shapes["c"]["rotation"], math.pi / 2)


def test_layout_verbs() -> None:
    shapes = canvas()
    apply_layout(shapes, "align", dict(ids=["a", "b", "c"], alignment="left"))
    assert {shapes[i]["x"] for i in "abc"} == {0}
    apply_layout(shapes, "stack", dict(ids=["a", "b", "c"], direction="vertical", gap=10))
    ys = sorted((shape_bounds(shapes[i]).y, shape_bounds(shapes[i]).max_y) for i in "abc")
    assert ys == [(0, 50), (60, 110), (120, 170)]
    shapes = canvas()
    apply_layout(shapes, "distribute", dict(ids=["a", "b", "c"], direction="horizontal"))
    # first stays at 0, last right edge at 400; the middle one (c, w 50) centred in the gaps
    assert shapes["a"]["x"] == 0 and shapes["b"]["x"] == 300
    assert shapes["c"]["x"] == 175


def test_children_move_with_their_group_and_reorder() -> None:
    shapes = canvas()
    apply_wire_action(shapes, act("create_shape", id="g", type="group", x=0, y=0, props={}))
    for kid in ("a", "b"):
        apply_wire_action(shapes, act("update_shape", id=kid, parentId="g"))
    apply_layout(shapes, "move", dict(ids=["g", "a"], dx=1, dy=0))
    assert shapes["a"]["x"] == 1 and shapes["b"]["x"] == 301  # moved once, not twice
    apply_wire_action(shapes, act("reorder", ids=["a"], to="back"))
    assert next(iter(shapes)) == "a"
    apply_wire_action(shapes, act("reorder", ids=["a"], to="forward"))
    assert list(shapes)[:2] == ["b", "a"]
    apply_wire_action(shapes, act("delete_shape", ids=["g"]))
    assert list(shapes) == ["c"]


def test_ui_verbs_change_nothing() -> None:
    shapes = canvas()
    before = copy.deepcopy(shapes)
    for name, params in [
        ("set_viewport", {"x": 0, "y": 0, "w": 10, "h": 10}),
        ("think", {"text": "hm"}),
        ("todo", {"items": []}),
        ("add_detail", {"text": "x"}),
    ]:
        apply_wire_action(shapes, act(name, **params))
    assert shapes == before


def test_mirror_partials_revert_before_newer_version() -> None:
    mirror = CanvasMirror()
    mirror.load(list(canvas().values()))
    mirror.apply(
        [act("create_shape", aid="p", id="n", type="geo", x=0, y=0, props={"w": 10, "h": 10})],
        partial=True,
    )
    mirror.apply([act("update_shape", aid="q", id="a", x=99)], partial=True)
    mirror.apply(
        [act("create_shape", aid="p", id="n2", type="geo", x=5, y=5, props={"w": 10, "h": 10})],
        partial=True,
    )
    assert "n" not in mirror and "n2" in mirror
    # A revert is a final no-op version under the same id.
    mirror.apply([act("think", aid="q", text="canceled")])
    assert mirror.get("a") == box("a", 0, 0)
    mirror.apply([act("create_shape", aid="p", id="n3", type="geo", x=5, y=5, props={})])
    assert "n2" not in mirror and "n3" in mirror and mirror.in_flight() == []


def test_mirror_delete_partial_restores_order() -> None:
    mirror = CanvasMirror()
    mirror.load(list(canvas().values()))
    mirror.apply([act("delete_shape", aid="d", ids=["a"])], partial=True)
    mirror.apply([act("delete_shape", aid="d", ids=["c"])], partial=False)
    assert [s["id"] for s in mirror.snapshot()] == ["a", "b"]


def test_normalize_record_strips_prefix_and_bad_numbers() -> None:
    mirror = CanvasMirror()
    n = mirror.load(
        [
            {
                "id": "shape:x",
                "type": "geo",
                "x": float("nan"),
                "y": 3,
                "parentId": "page:page",
                "props": {"w": 1},
            },
            {"nope": 1},
        ]
    )
    assert n == 1 and mirror.get("x") == {
        "id": "x",
        "type": "geo",
        "x": 0.0,
        "y": 3.0,
        "rotation": 0.0,
        "props": {"w": 1},
    }


def _corners(s: dict[str, Any]) -> set[tuple[float, float]]:
    """The page corners of a box shape, rounded (its mirror image must have the same set)."""
    x, y, a = s["x"], s["y"], s.get("rotation", 0.0)
    w, h = s["props"]["w"], s["props"]["h"]
    cos, sin = math.cos(a), math.sin(a)
    local = [(0, 0), (w, 0), (0, h), (w, h)]
    return {(round(x + u * cos - v * sin, 6), round(y + u * sin + v * cos, 6)) for u, v in local}


@pytest.mark.parametrize("rotation", [0.0, math.pi / 6, 2.0])
@pytest.mark.parametrize(("sx", "sy"), [(-1, 1), (1, -1), (-1, -1), (-2, 0.5), (0.5, -3)])
def test_a_negative_scale_mirrors_a_box(rotation: float, sx: float, sy: float) -> None:
    shapes = {"b": {**box("b", 40, 10, 120, 60), "rotation": rotation}}
    before = copy.deepcopy(shapes["b"])
    apply_layout(shapes, "resize", dict(ids=["b"], scaleX=sx, scaleY=sy, originX=7, originY=3))
    after = shapes["b"]
    assert after["props"]["w"] == pytest.approx(120 * abs(sx))
    assert after["props"]["h"] == pytest.approx(60 * abs(sy))
    if abs(sx) == abs(sy) == 1:
        # Every corner lands on the mirror image of a corner: the box covers its mirror image.
        mirrored = {
            (round(7 + (px - 7) * sx, 6), round(3 + (py - 3) * sy, 6))
            for px, py in _corners(before)
        }
        assert _corners(after) == mirrored
    if rotation == 0.0:  # scaled too: the page box is the scaled box, wherever it flipped to
        b = shape_bounds(after)
        xs = sorted(7 + (v - 7) * sx for v in (40, 160))
        ys = sorted(3 + (v - 3) * sy for v in (10, 70))
        assert (b.x, b.max_x, b.y, b.max_y) == pytest.approx((xs[0], xs[1], ys[0], ys[1]))
    if rotation and abs(sx) != abs(sy):
        return  # a rotated box scaled unevenly is no box: only approximated, not reversible
    # Flipping back restores the shape.
    apply_layout(
        shapes, "resize", dict(ids=["b"], scaleX=1 / sx, scaleY=1 / sy, originX=7, originY=3)
    )
    for key in ("x", "y"):
        assert shapes["b"][key] == pytest.approx(before[key])
    assert math.cos(shapes["b"]["rotation"]) == pytest.approx(math.cos(rotation))
    assert math.sin(shapes["b"]["rotation"]) == pytest.approx(math.sin(rotation))


def test_a_flip_mirrors_points_and_asymmetric_geo_kinds() -> None:
    line = {
        "id": "ln",
        "type": "line",
        "x": 0.0,
        "y": 300.0,
        "rotation": 0.0,
        "props": {"points": [{"x": 0, "y": 0}, {"x": 60, "y": 30}, {"x": 100, "y": 0}]},
    }
    arrow = {**box("f", 0, 0), "props": {"geo": "arrow-right", "w": 100, "h": 50}}
    slant = {**box("r", 0, 0), "props": {"geo": "rhombus", "w": 100, "h": 50}}
    shapes = {"ln": line, "f": arrow, "r": slant}
    apply_layout(shapes, "resize", dict(ids=["ln", "f"], scaleX=-1, scaleY=1, originX=50))
    pts = [(line["x"] + p["x"], line["y"] + p["y"]) for p in line["props"]["points"]]
    assert pts == [(100, 300), (40, 330), (0, 300)]
    assert arrow["props"]["geo"] == "arrow-left" and (arrow["x"], arrow["y"]) == (0, 0)
    apply_layout(shapes, "resize", dict(ids=["r"], scaleX=1, scaleY=-1, originY=25))
    assert slant["props"]["geo"] == "rhombus-2" and (slant["x"], slant["y"]) == (0, 0)
