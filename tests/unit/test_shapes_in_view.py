"""The model's list of shapes in view names every shape that overlaps the view, as the
browser's screenshot of that view draws it (clipped): not only the shapes fully inside."""

from __future__ import annotations

from typing import Any

from steward.actions.convert import simple_to_record
from steward.canvas.coords import CoordinateSpace
from steward.canvas.tiers import to_blurry
from steward.prompt.parts.blurry_shapes import in_view
from steward.prompt.state import PromptState
from steward.protocol.box import Box


def _box(sid: str, x: float, y: float, w: float = 200, h: float = 150) -> dict[str, Any]:
    return {"id": sid, "type": "geo", "x": x, "y": y, "props": {"geo": "rectangle", "w": w, "h": h}}


def _listed(view: Box, *shapes: dict[str, Any]) -> list[str]:
    state = PromptState(
        message="m",
        shapes={s["id"]: s for s in shapes},
        viewport=view,
        coords=None,  # type: ignore[arg-type]
        enabled_actions=(),
    )
    return in_view(state)


def test_a_shape_half_inside_the_view_is_listed_and_one_outside_is_not() -> None:
    view = Box(0, 0, 400, 300)
    listed = _listed(
        view,
        _box("inside", 10, 10),
        _box("half-right", 300, 50),  # its left half inside
        _box("half-top", 50, -100),  # its lower part inside
        _box("around", -100, -100, 800, 600),  # the view lies inside it
        _box("outside", 600, 50),
        _box("touching", 400, 50),  # shares only the right edge: no pixel inside
    )
    assert sorted(listed) == ["around", "half-right", "half-top", "inside"]


def test_an_arrow_or_a_line_in_the_list_says_which_end_is_which() -> None:
    """A line listed only as a box (x, y, w, h) lost its direction; `create` takes x1, y1,
    x2, y2, and the list gives them too, in the request's frame."""
    rec = simple_to_record({"_type": "line", "x1": 140, "y1": 60, "x2": 100, "y2": 78}, "beam")
    assert rec is not None
    row = CoordinateSpace(100, 50).shape_to_model(to_blurry(rec, {"beam": rec}))
    assert (row["x1"], row["y1"], row["x2"], row["y2"]) == (40, 10, 0, 28)
    assert (row["x"], row["y"], row["w"], row["h"]) == (0, 10, 40, 18)


def test_a_centred_or_right_aligned_text_says_so_beside_its_drawn_box() -> None:
    """`move` takes a text's anchor (its centre or right edge): the brief list says which."""
    from steward.canvas.tiers import to_blurry

    record = {
        "id": "shape:label",
        "type": "text",
        "x": 100,
        "y": 40,
        "props": {"text": "Jetty", "textAlign": "end", "size": "m", "autoSize": True},
    }
    row = to_blurry(record)
    assert row["textAlign"] == "end" and row["x"] == 100
    left = to_blurry({**record, "props": {**record["props"], "textAlign": "start"}})
    assert "textAlign" not in left
