"""Canvas problems worth fixing (the quality report: unintended overlaps, text overflowing its
shape, loose arrows, shapes left locked), and the notes on what became of the agent's last
actions."""

from typing import Any

from steward.canvas.quality import quality_report
from steward.prompt.base import Block, PromptPart, text
from steward.prompt.state import PromptState

MAX_LINTS = 20
MAX_NOTES = 20


def lint(shapes: dict[str, dict[str, Any]]) -> list[str]:
    """The quality report of the canvas, worded for the model (the kit's canvas lints)."""
    return quality_report(shapes).lints()[:MAX_LINTS]


def _build(state: PromptState) -> list[Block]:
    found = lint(state.shapes)
    lines = ["Problems on the canvas:", *(f"- {x}" for x in found)] if found else []
    if state.notes:
        notes = state.notes[-MAX_NOTES:]
        lines += ["What happened to your last actions:", *(f"- {x}" for x in notes)]
    return text(*lines) if lines else []


_GUIDE = """Problems found on the canvas (overlapping text, arrows loose at an end, shapes grown to
fit their text) and remarks about your last actions (an id that did not exist, a field that was
dropped). Fix those you caused or were asked about."""

PART = PromptPart(
    "lints",
    65,
    False,
    _build,
    title="Problems found",
    guide=_GUIDE,
)
