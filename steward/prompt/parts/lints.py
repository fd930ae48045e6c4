"""Canvas problems worth fixing (overlapping text, unconnected arrows, shapes grown by text),
and the notes on what became of the agent's last actions."""

from typing import Any

from steward.canvas.bounds import num, shape_bounds
from steward.prompt.base import Block, PromptPart, text
from steward.prompt.state import PromptState

MAX_LINTS = 20
MAX_NOTES = 20


def lint(shapes: dict[str, dict[str, Any]]) -> list[str]:
    out: list[str] = []
    texts = [(sid, shape_bounds(s)) for sid, s in shapes.items() if s.get("type") == "text"]
    texts.sort(key=lambda it: it[1].x)
    for i, (a, ba) in enumerate(texts):  # sweep by x: only neighbours that can overlap
        for b, bb in texts[i + 1 :]:
            if bb.x >= ba.max_x:
                break
            if ba.intersects(bb):
                out.append(f"text {a!r} overlaps text {b!r}")
    for sid, s in shapes.items():
        if s.get("type") == "arrow":
            binds = s.get("bindings") or {}
            if not binds.get("start") or not binds.get("end"):
                out.append(f"arrow {sid!r} is not connected at both ends")
        if s.get("type") in ("geo", "note") and num((s.get("props") or {}).get("growY")) > 0:
            out.append(f"shape {sid!r} grew taller to fit its text; make it bigger or shorten it")
    return out[:MAX_LINTS]


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
