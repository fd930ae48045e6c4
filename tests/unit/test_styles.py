"""Fills as tldraw's agent kit teaches them: the model's `solid` is tldraw's saturated
`lined-fill`, its `tint` tldraw's pastel `solid`; shapes are described back the same way."""

from __future__ import annotations

from typing import Any

import pytest

from steward.actions.base import RunState
from steward.actions.registry import ACTIONS, process
from steward.canvas.simple import to_simple
from steward.canvas.styles import (
    COLOR_LOOKS,
    COLORS,
    FILL_LOOKS,
    MODEL_FILLS,
    fill_to_model,
    fill_to_tldraw,
)
from steward.prompt.system_prompt import flow

MODEL_TO_TLDRAW = {
    "none": "none",
    "solid": "lined-fill",
    "background": "semi",
    "tint": "solid",
    "pattern": "pattern",
}
TLDRAW_TO_MODEL = {
    "none": "none",
    "fill": "solid",
    "lined-fill": "solid",
    "semi": "background",
    "solid": "tint",
    "pattern": "pattern",
}


def _box(fill: str) -> dict[str, Any]:
    return {
        "id": "barn",
        "type": "geo",
        "x": 0.0,
        "y": 0.0,
        "rotation": 0.0,
        "props": {"geo": "rectangle", "w": 100.0, "h": 80.0, "color": "red", "fill": fill},
    }


def _run(action: dict[str, Any], shapes: dict[str, Any] | None = None) -> Any:
    ctx = RunState(shapes=shapes or {})
    out = process(action, index=0, complete=True, incomplete_path=None, ctx=ctx, enabled=ACTIONS)
    assert out is not None
    return out


@pytest.mark.parametrize(("model", "tldraw"), MODEL_TO_TLDRAW.items())
def test_model_fill_becomes_the_kits_tldraw_fill(model: str, tldraw: str) -> None:
    assert fill_to_tldraw(model) == tldraw
    shape = {"_type": "rectangle", "shapeId": "barn", "x": 0, "y": 0, "w": 100, "h": 80}
    out = _run({"_type": "create", "shape": {**shape, "color": "red", "fill": model}})
    assert out.ops[0].params["props"]["fill"] == tldraw


@pytest.mark.parametrize(("tldraw", "model"), TLDRAW_TO_MODEL.items())
def test_tldraw_fill_is_described_with_the_kits_name(tldraw: str, model: str) -> None:
    assert fill_to_model(tldraw) == model
    assert to_simple(_box(tldraw))["fill"] == model


def test_a_red_barn_is_saturated_not_pink() -> None:
    shape = {"_type": "rectangle", "shapeId": "barn", "x": 0, "y": 0, "w": 100, "h": 80}
    out = _run({"_type": "create", "shape": {**shape, "color": "red", "fill": "solid"}})
    assert out.ops[0].params["props"]["fill"] == "lined-fill"  # tldraw's pastel is "solid"


def test_every_model_fill_round_trips() -> None:
    for model in MODEL_FILLS:
        assert fill_to_model(fill_to_tldraw(model)) == model


def test_aliases_and_unknowns() -> None:
    assert fill_to_tldraw("Lined Fill") == "lined-fill"  # tldraw's name: the saturated fill
    assert fill_to_tldraw("semi") == "semi"
    assert fill_to_tldraw("transparent") == "none"
    assert fill_to_tldraw("sparkly") == "none"
    assert fill_to_tldraw(None, "semi") == "semi"
    assert fill_to_model("glitter") == "none"
    assert fill_to_model(3) == "none"


def test_an_update_of_the_colour_keeps_the_fill() -> None:
    """Described as `solid`, read back as `lined-fill`: changing only the colour sends no fill."""
    for tldraw in ("lined-fill", "fill", "solid", "semi"):
        shapes = {"barn": _box(tldraw)}
        out = _run(
            {"_type": "update", "update": {"shapeId": "barn", "color": "blue"}}, shapes=shapes
        )
        (op,) = out.ops
        assert op.params["props"] == {"color": "blue"}, (tldraw, op.params)


def test_pen_fill_uses_the_same_mapping() -> None:
    pen = {
        "_type": "pen",
        "shapeId": "hill",
        "points": [{"x": 0, "y": 0}, {"x": 50, "y": 0}, {"x": 25, "y": 40}],
        "closed": True,
        "fill": "solid",
        "color": "green",
    }
    out = _run(pen)
    assert out.ops[0].params["props"]["fill"] == "lined-fill"


def test_the_prompt_says_how_each_fill_and_colour_looks() -> None:
    guide = flow(ACTIONS["create"].guide)
    lines = guide.splitlines()
    for fill in MODEL_FILLS:
        assert sum(line.startswith(f"- Fill `{fill}`:") for line in lines) == 1, fill
    for color in COLORS:
        assert sum(line.startswith(f"- Colour `{color}`:") for line in lines) == 1, color
    assert set(FILL_LOOKS) == set(MODEL_FILLS) and set(COLOR_LOOKS) == set(COLORS)
