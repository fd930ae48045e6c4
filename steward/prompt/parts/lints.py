"""Problems the agent's own previous request left on the canvas (unintended overlaps, text
overflowing its shape, loose arrows, shapes left locked), and the notes on what became of its
last actions. Both are the run's own, handed in by the runtime (`PromptState.lints`, `notes`):
never the whole canvas's, never another run's."""

from typing import Any

from steward.canvas.quality import quality_report
from steward.prompt.base import Block, PromptPart, text
from steward.prompt.state import PromptState

MAX_LINTS = 20
MAX_NOTES = 20


def lint(shapes: dict[str, dict[str, Any]]) -> list[str]:
    """The quality report of a whole canvas, worded for the model (the kit's canvas lints)."""
    return quality_report(shapes).lints()[:MAX_LINTS]


def _build(state: PromptState) -> list[Block]:
    found = state.lints[:MAX_LINTS]
    lines = ["Problems your last actions left on the canvas:", *(f"- {x}" for x in found)]
    lines = lines if found else []
    if state.notes:
        notes = state.notes[-MAX_NOTES:]
        lines += ["What happened to your last actions:", *(f"- {x}" for x in notes)]
    return text(*lines) if lines else []


_GUIDE = """Problems your own last actions left on the canvas (shapes overlapping others they are
not part of, text overflowing its shape, arrows loose at an end) and remarks about those actions
(an id that did not exist, a field that was dropped). Fix them unless the request meant it so.
Parts of one drawing may overlap: a window in a wall, a trunk under a crown, a house standing on
the ground behind it. Strokes count where their lines run: two that cross are named as crossing."""

PART = PromptPart(
    "lints",
    65,
    False,
    _build,
    title="Problems found",
    guide=_GUIDE,
)
