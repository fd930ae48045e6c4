"""The run quality report: each problem it counts, and the pictures the scripted model draws."""

from __future__ import annotations

from typing import Any

import pytest
from prometheus_client import REGISTRY

from steward.canvas.quality import RunShapes, add_counts, quality_report
from steward.model.scripted.pictures import PICTURES, layout
from steward.protocol.box import Box
from steward.room.runs.sessions import record_quality


def geo(
    sid: str, x: float, y: float, w: float, h: float, text: str = "", **kw: Any
) -> dict[str, Any]:
    props = {"geo": "rectangle", "w": w, "h": h, "text": text, **kw.pop("props", {})}
    return {"id": sid, "type": "geo", "x": x, "y": y, "rotation": 0, "props": props, **kw}


def arrow(sid: str, start: str | None, end: str | None) -> dict[str, Any]:
    return {
        "id": sid,
        "type": "arrow",
        "x": 0,
        "y": 0,
        "rotation": 0,
        "props": {"start": {"x": 0, "y": 0}, "end": {"x": 10, "y": 0}},
        "bindings": {"start": start, "end": end},
    }


def by_id(*shapes: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {s["id"]: s for s in shapes}


def test_a_clean_canvas_has_no_problems() -> None:
    shapes = by_id(
        geo("a", 0, 0, 200, 100, "Sign up"),
        geo("b", 300, 0, 200, 100, "Verify"),
        geo("eye", 20, 20, 10, 10),
        arrow("ab", "a", "b"),
    )
    report = quality_report(shapes, viewport=Box(-10, -10, 600, 200))
    assert report.problems() == {} and report.lints() == []


def test_each_problem_is_counted_once_with_its_shapes() -> None:
    shapes = by_id(
        geo("a", 0, 0, 200, 100),
        geo("b", 150, 50, 200, 100),  # overlap, neither holds the other
        geo("tiny", 500, 0, 60, 40, "A sentence far too long for this box"),
        geo("grown", 700, 0, 200, 100, "ok", props={"growY": 30}),
        arrow("loose", "a", None),
        arrow("gone", "a", "missing"),
        geo("far", 5000, 5000, 10, 10),
        geo("locked", 900, 300, 10, 10, isLocked=True),
    )
    report = quality_report(
        shapes,
        viewport=Box(-10, -10, 1200, 600),
        task_bounds=[Box(-10, -10, 800, 400)],
        partial=["b"],
    )
    assert report.overlaps == [("a", "b")]
    assert report.overflowing_text == ["tiny", "grown"]
    assert report.loose_arrows == ["loose", "gone"]
    assert report.outside_viewport == ["far"]
    assert set(report.outside_bounds) == {"grown", "far", "locked"}
    assert report.locked_or_partial == ["b", "locked"]
    assert len(report.lints()) == sum(report.counts().values())
    total = add_counts(add_counts({}, report.counts()), report.counts())
    assert total["unintended_overlaps"] == 2 and total["loose_arrows"] == 4


def test_only_what_the_run_touched_is_judged() -> None:
    shapes = by_id(
        geo("old1", 0, 0, 200, 100), geo("old2", 100, 50, 200, 100), geo("new", 1000, 0, 100, 100)
    )
    assert quality_report(shapes, touched=["new"]).problems() == {}
    assert quality_report(shapes).counts()["unintended_overlaps"] == 1
    shapes["new2"] = geo("new2", 250, 0, 100, 100)
    assert quality_report(shapes, touched=["new2"]).overlaps == [("new2", "old2")]


@pytest.mark.parametrize("name", sorted(PICTURES))
@pytest.mark.parametrize("size", [60, 137, 240, 333])
def test_pictures_have_no_unintended_overlaps_at_any_size(name: str, size: int) -> None:
    parts = layout(PICTURES[name], 13, 7, size, size)
    shapes = by_id(*(geo(f"p{i}", x, y, w, h) for i, (_, x, y, w, h, _, _) in enumerate(parts)))
    report = quality_report(shapes, viewport=Box(13, 7, size, size))
    assert report.problems() == {}, report
    assert len({(p[1], p[2], p[3], p[4]) for p in parts}) == len(parts)  # none hides another


def test_run_shapes_follow_creates_changes_and_deletes() -> None:
    run = RunShapes()
    run.note("create_shape", {"id": "a", "type": "geo"})
    run.note("create_shape", {"id": "b", "type": "geo"})
    run.note("update_shape", {"id": "old", "props": {}})
    run.note("move", {"ids": ["a", "old2"], "dx": 1, "dy": 0})
    run.note("think", {"text": "no shapes"})
    run.note("delete_shape", {"ids": ["b"]})
    assert run.touched == ["a", "old", "old2"] and run.created == ["a"]
    shapes = by_id(geo("a", 5000, 0, 10, 10), geo("old", 6000, 0, 10, 10))
    report = quality_report(
        shapes, touched=run.touched, created=run.created, viewport=Box(0, 0, 100, 100)
    )
    assert report.outside_viewport == ["a"]  # changed, not drawn: "old" does not count


def test_each_sessions_counts_go_to_metrics() -> None:
    def value(kind: str) -> float:
        got = REGISTRY.get_sample_value("steward_quality_problems_total", {"kind": kind})
        return got or 0.0

    before = value("loose_arrows")
    counts = record_quality(quality_report(by_id(arrow("x", None, None))))
    assert counts["loose_arrows"] == 1 and value("loose_arrows") == before + 1
