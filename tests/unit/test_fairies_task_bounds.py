"""Task bounds enforcement on wire actions (the rule in steward/turns/bounds_guard.py)."""

from __future__ import annotations

from typing import Any

from steward.protocol.box import Box
from steward.protocol.messages import WireAction
from steward.turns.bounds_guard import BoundsGuard, shapes_in

LEFT = Box(0, 0, 500, 400)
RIGHT = Box(400, 0, 500, 400)  # overlaps LEFT on x 400..500


def _geo(sid: str, x: float, y: float, w: float = 100, h: float = 100) -> dict[str, Any]:
    return {"id": sid, "type": "geo", "x": x, "y": y, "rotation": 0.0, "props": {"w": w, "h": h}}


def _create(sid: str, x: float, y: float, w: float = 100, h: float = 100) -> WireAction:
    return WireAction(id=f"a-{sid}", name="create_shape", params=_geo(sid, x, y, w, h))


SHAPES = {"l1": _geo("l1", 50, 50), "r1": _geo("r1", 700, 50), "mid": _geo("mid", 410, 50, 80)}


def test_create_inside_kept_outside_clamped_too_big_refused() -> None:
    v = BoundsGuard(LEFT).check(
        [_create("a", 10, 10), _create("b", 450, 350), _create("c", 0, 0, 600, 100)], {}
    )
    assert [a.params["id"] for a in v.actions] == ["a", "b"]
    assert v.actions[1].params["x"] == 400 and v.actions[1].params["y"] == 300
    assert v.clamped == ["a-b"]
    assert v.refused[0][0] == "a-c" and "does not fit" in v.refused[0][1]


def test_edits_outside_the_area_are_refused() -> None:
    guard = BoundsGuard(LEFT)
    acts = [
        WireAction(id="u", name="update_shape", params={"id": "r1", "props": {"color": "red"}}),
        WireAction(id="d", name="delete_shape", params={"ids": ["r1"]}),
        WireAction(id="ok", name="update_shape", params={"id": "l1", "x": 60}),
        WireAction(id="t", name="think", params={"text": "hm"}),
        WireAction(id="steal", name="create_shape", params=_geo("r1", 0, 0)),
    ]
    v = guard.check(acts, SHAPES)
    assert [a.id for a in v.actions] == ["ok", "t"]
    assert [r[0] for r in v.refused] == ["u", "d", "steal"]
    assert all("outside your task bounds" in r[1] for r in v.refused)


def test_update_that_leaves_the_area_is_clamped() -> None:
    act = WireAction(id="u", name="update_shape", params={"id": "l1", "x": 480})
    v = BoundsGuard(LEFT).check([act], SHAPES)
    assert v.actions[0].params["x"] == 400 and v.clamped == ["u"]


def test_two_drones_with_overlapping_bounds_cannot_trample_each_other() -> None:
    shapes = dict(SHAPES)
    left, right = BoundsGuard(LEFT), BoundsGuard(RIGHT)
    # The shared strip (x 400..500) is open to both.
    assert left.check(
        [WireAction(id="a", name="update_shape", params={"id": "mid", "x": 415})], shapes
    ).actions
    assert right.check(
        [WireAction(id="b", name="update_shape", params={"id": "mid", "x": 415})], shapes
    ).actions
    # Each one's own shapes are closed to the other.
    assert left.check(
        [WireAction(id="c", name="delete_shape", params={"ids": ["r1"]})], shapes
    ).refused
    assert right.check(
        [WireAction(id="d", name="delete_shape", params={"ids": ["l1"]})], shapes
    ).refused
    assert [s["id"] for s in shapes_in(shapes, LEFT)] == ["l1", "mid"]
    assert [s["id"] for s in shapes_in(shapes, RIGHT)] == ["r1", "mid"]


def test_later_actions_see_earlier_ones_in_the_batch() -> None:
    acts = [
        _create("n", 100, 100),
        WireAction(id="m", name="update_shape", params={"id": "n", "x": 150}),
        WireAction(id="far", name="update_shape", params={"id": "n", "x": 1050}),
    ]
    v = BoundsGuard(LEFT).check(acts, {})
    # n, created earlier in the batch, is known to the later updates: moved, then held inside.
    assert [a.id for a in v.actions] == ["a-n", "m", "far"] and v.clamped == ["far"]
    assert v.actions[2].params["x"] == 400
