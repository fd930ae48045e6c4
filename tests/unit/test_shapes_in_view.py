"""The model's list of shapes in view names every shape that overlaps the view, as the
browser's screenshot of that view draws it (clipped): not only the shapes fully inside."""

from __future__ import annotations

from typing import Any

from steward.canvas.bounds import Rect
from steward.prompt.parts.blurry_shapes import in_view
from steward.prompt.state import PromptState


def _box(sid: str, x: float, y: float, w: float = 200, h: float = 150) -> dict[str, Any]:
    return {"id": sid, "type": "geo", "x": x, "y": y, "props": {"geo": "rectangle", "w": w, "h": h}}


def _listed(view: Rect, *shapes: dict[str, Any]) -> list[str]:
    state = PromptState(
        message="m",
        shapes={s["id"]: s for s in shapes},
        viewport=view,
        coords=None,  # type: ignore[arg-type]
        enabled_actions=(),
    )
    return in_view(state)


def test_a_shape_half_inside_the_view_is_listed_and_one_outside_is_not() -> None:
    view = Rect(0, 0, 400, 300)
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
