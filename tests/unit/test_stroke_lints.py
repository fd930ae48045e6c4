"""Lints without false alarms: a shape on a background behind it is not an overlap, strokes
are judged by the lines they draw (not their boxes), a real crossing of strokes is found, and
the same canvas gives the same lints whoever asks and in whatever order."""

from __future__ import annotations

import random
from typing import Any

from steward.canvas.quality import quality_report


def geo(sid: str, x: float, y: float, w: float, h: float, text: str = "") -> dict[str, Any]:
    props = {"geo": "rectangle", "w": w, "h": h, "text": text}
    return {"id": sid, "type": "geo", "x": x, "y": y, "rotation": 0, "props": props}


def pen(sid: str, *pts: tuple[float, float], closed: bool = False) -> dict[str, Any]:
    x0, y0 = min(p[0] for p in pts), min(p[1] for p in pts)
    seg = {"type": "free", "points": [{"x": x - x0, "y": y - y0, "z": 0.5} for x, y in pts]}
    props = {"segments": [seg], "isClosed": closed, "fill": "solid" if closed else "none"}
    return {"id": sid, "type": "draw", "x": x0, "y": y0, "rotation": 0, "props": props}


def line(sid: str, a: tuple[float, float], b: tuple[float, float]) -> dict[str, Any]:
    props = {"points": [{"x": 0, "y": 0}, {"x": b[0] - a[0], "y": b[1] - a[1]}]}
    return {"id": sid, "type": "line", "x": a[0], "y": a[1], "rotation": 0, "props": props}


def arrow(sid: str, a: tuple[float, float], b: tuple[float, float], **binds: str) -> dict[str, Any]:
    props = {"start": {"x": 0, "y": 0}, "end": {"x": b[0] - a[0], "y": b[1] - a[1]}}
    rec = {"id": sid, "type": "arrow", "x": a[0], "y": a[1], "rotation": 0, "props": props}
    rec["bindings"] = {"start": binds.get("start"), "end": binds.get("end")}
    return rec


def by_id(*shapes: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {s["id"]: s for s in shapes}


def test_a_house_standing_on_the_ground_behind_it_is_never_an_overlap() -> None:
    # back to front: the ground strip (another task's), the house rising above it
    shapes = by_id(geo("ground", 0, 400, 1200, 120), geo("house", 300, 220, 200, 200))
    asks = [
        {},
        {"touched": ["house"], "created": ["house"]},
        {"touched": ["ground"], "created": ["ground"]},
        {"touched": ["house", "ground"], "created": ["house", "ground"]},
    ]
    assert all(quality_report(shapes, **ask).overlaps == [] for ask in asks)  # type: ignore[arg-type]
    # A hill drawn with the pen behind it is a background too.
    hill = pen("hill", (0, 500), (400, 300), (800, 500), closed=True)
    assert quality_report({"hill": hill, **shapes}, touched=["house"]).overlaps == []


def test_a_ground_drawn_in_front_hides_the_house_and_is_flagged() -> None:
    shapes = by_id(geo("house", 300, 220, 200, 200), geo("ground", 0, 400, 1200, 120))
    assert quality_report(shapes, touched=["house"]).overlaps == [("ground", "house")]


def test_a_stroke_passing_between_two_shapes_touches_neither() -> None:
    # The path's box covers both boxes; the path itself runs in the gap between them.
    path = pen("path", (0, 0), (150, 100), (150, 300), (0, 400))
    shapes = by_id(geo("left", 0, 120, 100, 160), geo("right", 200, 0, 200, 400), path)
    assert quality_report(shapes, touched=["path"]).overlaps == []
    through = line("rail", (250, 200), (450, 200))
    flagged = quality_report({**shapes, "rail": through}, touched=["rail"])
    assert flagged.overlaps == [("rail", "right")]
    assert "shapes 'rail' and 'right' overlap" in flagged.lints()[0]


def test_a_stroke_inside_a_shape_is_part_of_it() -> None:
    smile = pen("smile", (40, 60), (60, 75), (80, 60))
    shapes = by_id(geo("face", 0, 0, 120, 120), smile)
    assert quality_report(shapes).overlaps == []


def test_strokes_that_really_cross_are_found_and_strokes_that_join_are_not() -> None:
    a = pen("a", (0, 0), (100, 100), (200, 0))
    b = pen("b", (0, 80), (200, 80))  # crosses both legs of a
    c = line("c", (200, 0), (300, 0))  # starts where a ends
    d = line("d", (250, -50), (250, 0))  # stops on c
    shapes = by_id(a, b, c, d)
    report = quality_report(shapes)
    assert report.overlaps == [("a", "b")]
    assert report.lints() == [
        "strokes 'a' and 'b' cross and were not drawn together; unless the request meant it,"
        " move or redraw yours so they do not"
    ]
    # Crossings of one run's own strokes are one drawing's parts (an X-braced door).
    assert quality_report(shapes, touched=["a", "b"], created=["a", "b"]).overlaps == []


def test_an_arrow_meets_the_shapes_it_joins_but_not_others_on_its_way() -> None:
    shapes = by_id(
        geo("a", 0, 0, 100, 100),
        geo("mid", 200, 20, 60, 60),
        geo("b", 400, 0, 100, 100),
        arrow("ab", (50, 50), (450, 50), start="a", end="b"),
    )
    assert quality_report(shapes, touched=["ab"]).overlaps == [("ab", "mid")]
    shapes["mid"]["y"] = 200
    assert quality_report(shapes, touched=["ab"]).overlaps == []


def test_the_same_canvas_gives_the_same_lints_in_any_order() -> None:
    shapes = by_id(
        geo("ground", 0, 400, 1200, 120),
        geo("house", 300, 220, 200, 200),
        geo("shed", 450, 300, 200, 100),
        pen("a", (0, 0), (100, 100), (200, 0)),
        pen("b", (0, 80), (200, 80)),
        line("rail", (250, 250), (700, 250)),
    )
    first = quality_report(shapes).lints()
    assert len(first) == 3  # a×b, house×rail, house×shed
    rng = random.Random(7)
    for _ in range(20):
        touched = list(shapes)
        rng.shuffle(touched)
        assert quality_report(shapes, touched=touched).lints() == first


def test_a_lint_says_what_is_known_not_that_two_shapes_are_not_one_drawing() -> None:
    """A reader who was asked to put a sign in front of an awning drawn earlier read "are not
    parts of one drawing; move yours into free space": the steward only knows they were not
    drawn together. Two texts one run drew over each other hide each other's words."""
    shapes = by_id(geo("awning", 0, 0, 200, 60), geo("sign", 150, 40, 100, 40))
    (said,) = quality_report(shapes, touched=["sign"], created=["sign"]).lints()
    assert said == (
        "shapes 'awning' and 'sign' overlap and were not drawn together; unless the request"
        " meant it, move yours into free space"
    )
    texts = by_id(
        {"id": "t1", "type": "text", "x": 0, "y": 0, "props": {"text": "hello"}},
        {"id": "t2", "type": "text", "x": 10, "y": 5, "props": {"text": "world"}},
    )
    (both,) = quality_report(texts, touched=["t1", "t2"], created=["t1", "t2"]).lints()
    assert both == "shapes 't1' and 't2' overlap and their words hide each other; move one of them"


def test_a_one_line_label_that_fits_is_not_called_overflowing() -> None:
    """A 64 px tall box with a one-word label was flagged "overflows" though tldraw draws
    it at 64: a label's font is 22 px at size m (16 × 1.375), not a text shape's 24, so one
    line needs 22 × 1.35 + 2 × 16 ≈ 62 px."""
    fits = geo("counter", 0, 0, 200, 64, text="Counter")
    assert quality_report(by_id(fits)).overflowing_text == []
    short = geo("sign", 0, 0, 200, 55, text="Counter")
    assert quality_report(by_id(short)).overflowing_text == ["sign"]
