"""A fairy that plans drawings is told what its members can draw: the shape kinds and the
palette, in the drawing modes' own words."""

from __future__ import annotations

import pytest

from steward.canvas.styles import COLORS, FILL_LOOKS, GEO_KINDS
from steward.fairies.modes import MODES
from steward.prompt.registry import PARTS
from steward.prompt.system_prompt import system_prompt


def _prompt(name: str) -> str:
    m = MODES[name]  # type: ignore[index]
    return system_prompt(m.actions, [PARTS[n] for n in m.parts], m.name)


@pytest.mark.parametrize("name", ["orchestrating-active", "duo-orchestrating-active"])
def test_a_planning_prompt_lists_the_palette_and_the_shape_kinds(name: str) -> None:
    assert "create" not in MODES[name].actions  # type: ignore[index]  # it plans, not draws
    text = _prompt(name)
    for colour in COLORS:
        assert f"- Colour `{colour}`:" in text
    for fill, looks in FILL_LOOKS.items():
        assert f"- Fill `{fill}`: {looks}." in text
    assert ", ".join(GEO_KINDS) in text and "`pen`" in text


def test_the_palette_lines_are_the_drawing_modes_own() -> None:
    drawing, planning = _prompt("working-drone"), _prompt("orchestrating-active")
    lines = [ln for ln in drawing.splitlines() if ln.startswith(("- Colour `", "- Fill `"))]
    assert len(lines) == len(COLORS) + len(FILL_LOOKS)
    assert all(ln in planning.splitlines() for ln in lines)
