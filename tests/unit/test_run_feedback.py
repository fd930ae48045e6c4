"""Lints that help: only real problems, and only to the run that caused them, once."""

from __future__ import annotations

from typing import Any

from steward.canvas.quality import RunShapes, quality_report
from steward.fairies.run_feedback import MAX_RUNS_KEPT, RunFeedback


def geo(sid: str, x: float, y: float, w: float, h: float, text: str = "") -> dict[str, Any]:
    props = {"geo": "rectangle", "w": w, "h": h, "text": text}
    return {"id": sid, "type": "geo", "x": x, "y": y, "rotation": 0, "props": props}


def by_id(*shapes: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {s["id"]: s for s in shapes}


def drew(*ids: str) -> RunShapes:
    drawn = RunShapes()
    for i in ids:
        drawn.note("create_shape", {"id": i})
    return drawn


# The crown in front of its trunk (a crown behind would be the trunk's background).
TREE = by_id(geo("tree1-trunk", 45, 80, 30, 80), geo("tree1-crown", 0, 0, 120, 100))


def test_containment_is_not_an_overlap() -> None:
    shapes = by_id(
        geo("wall", 0, 0, 300, 200),
        geo("window", 20, 20, 60, 60),
        {"id": "label", "type": "text", "x": 101, "y": 150, "props": {"text": "Barn"}},
    )
    shapes["label"]["props"]["w"] = 50
    report = quality_report(shapes)  # nothing known about runs: containment alone spares
    assert report.overlaps == []


def test_one_runs_parts_may_overlap_but_not_with_others_shapes() -> None:
    shapes = {**TREE, "chart": geo("chart", 60, 130, 200, 100, "Sales")}
    report = quality_report(shapes, touched=list(TREE), created=list(TREE))
    assert report.overlaps == [("chart", "tree1-trunk")]  # the chart is not the run's
    unknown_runs = quality_report(shapes, touched=list(TREE)).overlaps
    assert sorted(unknown_runs) == [("chart", "tree1-trunk"), ("tree1-crown", "tree1-trunk")]


def test_two_labelled_shapes_of_one_run_still_overlap() -> None:
    shapes = by_id(geo("a", 0, 0, 200, 100, "Sign up"), geo("b", 150, 50, 200, 100, "Verify"))
    report = quality_report(shapes, touched=["a", "b"], created=["a", "b"])
    assert report.overlaps == [("a", "b")]
    assert report.counts()["unintended_overlaps"] == 1


def test_lints_go_to_the_run_that_caused_them_once() -> None:
    shapes = {**TREE, "chart": geo("chart", 60, 130, 200, 100, "Sales")}
    feedback = RunFeedback()
    feedback.keep("run-a", ["renamed duplicate id 'x' to 'x-2'"], drew(*TREE))
    assert feedback.take("run-b", shapes) == ([], [])  # another user's run hears nothing
    notes, lints = feedback.take("run-a", shapes)
    assert notes == ["renamed duplicate id 'x' to 'x-2'"]
    assert len(lints) == 1 and "'chart' and 'tree1-trunk' overlap" in lints[0]
    assert not any("tree1-crown" in x for x in lints)  # the tree's own parts
    assert feedback.take("run-a", shapes) == ([], [])  # told once


def test_a_fixed_problem_is_not_told() -> None:
    shapes = {**TREE, "chart": geo("chart", 60, 130, 200, 100, "Sales")}
    feedback = RunFeedback()
    feedback.keep("run-a", [], drew(*TREE))
    shapes["chart"] = geo("chart", 900, 120, 200, 100, "Sales")  # someone moved it away
    assert feedback.take("run-a", shapes) == ([], [])


def test_a_runs_earlier_shapes_stay_its_own() -> None:
    """Created in one request, met by a part drawn in the next: still one drawing."""
    feedback = RunFeedback()
    feedback.keep("run-a", [], drew("tree1-crown"))
    feedback.take("run-a", TREE)
    feedback.keep("run-a", [], drew("tree1-trunk"))
    assert feedback.take("run-a", TREE) == ([], [])


def test_held_runs_are_bounded() -> None:
    feedback = RunFeedback()
    for n in range(MAX_RUNS_KEPT + 10):
        feedback.keep(f"run-{n}", ["note"])
    assert feedback.take("run-0", {}) == ([], [])
    assert feedback.take(f"run-{MAX_RUNS_KEPT + 9}", {}) == (["note"], [])
