"""Coordinate offset/rounding round trips; clusters; blurry shapes."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from steward.canvas.coords import CoordinateSpace
from steward.canvas.tiers import capped_clusters, cluster_rects, to_blurry
from steward.protocol.box import Box

finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)


@given(finite, finite, finite, finite, finite, finite)
def test_point_round_trip_is_exact(
    ox: float, oy: float, x: float, y: float, w: float, h: float
) -> None:
    space = CoordinateSpace(ox, oy)
    mx, my = space.point_to_model("p", x, y)
    assert isinstance(mx, int) and isinstance(my, int)
    assert space.point_from_model("p", mx, my) == (x, y)
    box = {"x": x, "y": y, "w": abs(w), "h": abs(h)}
    assert space.box_from_model("b", space.box_to_model("b", box)) == box


@given(finite, finite, finite, finite, finite, finite)
def test_shape_and_arrow_round_trip_is_exact(
    ox: float, oy: float, x1: float, y1: float, x2: float, y2: float
) -> None:
    space = CoordinateSpace(ox, oy)
    arrow = {"_type": "arrow", "shapeId": "a", "x1": x1, "y1": y1, "x2": x2, "y2": y2}
    model = space.shape_to_model(arrow)
    assert all(isinstance(model[k], int) for k in ("x1", "y1", "x2", "y2"))
    assert space.shape_from_model(model) == arrow


def test_changed_values_are_offset_not_restored() -> None:
    space = CoordinateSpace(100.25, -50.5)
    mx, my = space.point_to_model("p", 110.4, -40.0)
    assert (mx, my) == (10, 11)
    assert space.point_from_model("p", mx + 5, my) == (115.25, -40.0)


def test_clusters_join_shapes_within_padding() -> None:
    rects = [Box(0, 0, 10, 10), Box(150, 0, 10, 10), Box(1000, 1000, 10, 10)]
    clusters = sorted(cluster_rects(rects), key=lambda c: c.bounds.x)
    assert [c.count for c in clusters] == [2, 1]
    assert clusters[0].bounds == Box(0, 0, 160, 10)


def test_clusters_match_quadratic_reference_and_huge_shapes() -> None:
    rnd = random.Random(3)
    rects = [Box(rnd.uniform(0, 5000), rnd.uniform(0, 5000), 50, 50) for _ in range(300)]
    rects.append(Box(-10_000, 2500, 30_000, 10))  # spans the board: joins many
    fast = sorted((c.count, c.bounds.x) for c in cluster_rects(rects))
    # quadratic reference: connected components of overlapping padded boxes
    padded = [r.expand(75) for r in rects]
    seen: set[int] = set()
    ref = []
    for i in range(len(rects)):
        if i in seen:
            continue
        stack, comp = [i], []
        seen.add(i)
        while stack:
            j = stack.pop()
            comp.append(j)
            for k in range(len(rects)):
                if k not in seen and padded[j].intersects(padded[k]):
                    seen.add(k)
                    stack.append(k)
        ref.append((len(comp), min(rects[c].x for c in comp)))
    assert fast == sorted(ref)
    assert len(capped_clusters(rects, cap=5)) <= 5


def test_blurry_shape() -> None:
    rec = {
        "id": "b",
        "type": "geo",
        "x": 1,
        "y": 2,
        "rotation": 0,
        "props": {"geo": "ellipse", "w": 30, "h": 40, "text": "hi"},
    }
    assert to_blurry(rec) == {
        "shapeId": "b",
        "type": "ellipse",
        "x": 1,
        "y": 2,
        "w": 30,
        "h": 40,
        "text": "hi",
    }


def test_blurry_shape_names_colour_and_fill_as_the_model_writes_them() -> None:
    rec = {
        "id": "barn",
        "type": "geo",
        "x": 0,
        "y": 0,
        "rotation": 0,
        "props": {"geo": "rectangle", "w": 10, "h": 10, "color": "red", "fill": "lined-fill"},
    }
    blurry = to_blurry(rec)
    assert (blurry["color"], blurry["fill"]) == ("red", "solid")  # tldraw lined-fill = solid
    rec["props"]["fill"] = "none"
    assert "fill" not in to_blurry(rec)
