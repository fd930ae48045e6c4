"""One request as the scripted model sees it: the reading of its words, the canvas it is
shown, and where new things may go; with the small helpers every answer uses."""

from __future__ import annotations

import re
from typing import Any

from steward.canvas.bounds import text_extent
from steward.canvas.free_space import GAP, Placer, fit_scale
from steward.model.scripted.reading import read
from steward.model.scripted.seen import Seen, SeenCanvas, seen_shapes
from steward.protocol.box import Box

NEEDS_MODEL = (
    "Without a real model (set STEWARD_MODEL=anthropic:<model> and ANTHROPIC_API_KEY) I can "
    "draw flow charts, sticky notes, text, shapes, arrows and simple pictures, and move, "
    "recolour, align or delete what you name."
)
FONT = 24.0  # tldraw's medium label size, for sizing boxes to their text
PAD = 24.0  # kept between a label and its shape's edge
STEP_MOVE = 200.0
MIN_SCALE = 0.55  # smaller than this and labels get hard to read: move the view instead


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:24] or "item"


def label_box(text: str, min_w: float, max_w: float) -> tuple[float, float, str]:
    """A box (w, h) that holds `text` at the label font, wrapping words past `max_w`."""
    char = 0.6 * FONT
    per_line = max(int((max_w - 2 * PAD) // char), 4)
    lines: list[str] = []
    for word in text.split():
        if lines and len(lines[-1]) + 1 + len(word) <= per_line:
            lines[-1] += " " + word
        else:
            lines.append(word)
    wrapped = "\n".join(lines) or text
    tw, th = text_extent(wrapped, FONT)
    return max(min_w, tw + 2 * PAD), max(100.0, th + 2 * PAD), wrapped


def say(text: str) -> dict[str, Any]:
    return {"_type": "message", "text": text}


def listing(shapes: list[Seen], limit: int = 6) -> str:
    names = [f"{s.type} “{s.text}”" if s.text else s.type for s in shapes[:limit]]
    more = f" and {len(shapes) - limit} more" if len(shapes) > limit else ""
    return ", ".join(names) + more


class ScriptedRequest:
    """One request: the reading, the canvas, and where things may go; the steps every
    answer shares."""

    def __init__(self, hints: dict[str, Any]) -> None:
        self.hints = hints
        self.r = read(str(hints.get("message", "")))
        v = hints.get("viewport") or {"x": 0, "y": 0, "w": 1600, "h": 900}
        self.view = Box(float(v["x"]), float(v["y"]), float(v["w"]), float(v["h"]))
        seen = seen_shapes(hints.get("canvas"))
        self.canvas = SeenCanvas(seen, list(hints.get("selection") or []))
        self.n = self.canvas.next_drawing()
        self.placed: list[Box] = []

    # -- shared steps ------------------------------------------------------------------
    def note(self, what: str) -> str:
        return f"drawing {self.n}: {what}"

    def sid(self, name: str) -> str:
        return f"d{self.n}-{slug(name)}"

    def place(self, w: float, h: float, *, scalable: bool = False) -> tuple[Box, float]:
        """Where a w×h drawing goes, and the scale that fits it into the viewport."""
        _, box, scale = self.place_first([(w, h)], scalable=scalable)
        return box, scale

    def place_first(
        self, sizes: list[tuple[float, float]], *, scalable: bool = False
    ) -> tuple[int, Box, float]:
        """The first of several layouts (sizes) that fits in free space inside the viewport:
        (its index, its place, its scale). Drawings without text may shrink to fit; when
        nothing fits, the first layout goes beside the view (and the view moves to it)."""
        placer = Placer(
            self.view, self.canvas.obstacles() + self.placed, self.anchor_box(), self.r.side
        )
        tries = [(i, 1.0) for i in range(len(sizes))]
        if scalable:  # smaller, down to MIN_SCALE, rather than outside the view
            for factor in (1.0, 0.85, 0.7, MIN_SCALE):
                tries += [(i, fit_scale(*sizes[i], self.view) * factor) for i in range(len(sizes))]
        for i, scale in tries:
            if scale < MIN_SCALE:
                continue
            w, h = sizes[i]
            box = placer.inside(w * scale, h * scale)
            if box is not None:
                self.placed.append(box)
                return i, box, scale
        w, h = sizes[0]
        scale = max(fit_scale(w, h, self.view), MIN_SCALE) if scalable else 1.0
        box = placer.anywhere(w * scale, h * scale)
        self.placed.append(box)
        return 0, box, scale

    def anchor_box(self) -> Box | None:
        if not self.r.anchor:
            return None
        word = self.r.anchor
        for shapes in (
            self.canvas.drawing_named(word),
            self.canvas.of_kinds(
                [
                    k
                    for k, names in (("note", ("note", "notes")), ("arrow", ("arrow",)))
                    if word in names
                ]
            ),
        ):
            box = self.canvas.bounds(shapes)
            if box is not None:
                return box
        hits = [s for s in self.canvas.shapes if word in s.text.lower() or word in s.what]
        return self.canvas.bounds(hits)

    def show(self, box: Box) -> list[dict[str, Any]]:
        """Move the agent's view when what it drew is not inside the asker's viewport."""
        if self.view.contains(box):
            return []
        pad = GAP
        return [
            {
                "_type": "setMyView",
                "intent": "Show what I drew",
                "x": int(box.x - pad),
                "y": int(box.y - pad),
                "w": int(box.w + 2 * pad),
                "h": int(box.h + 2 * pad),
            }
        ]

    def targets(self) -> list[Seen]:
        """What a change applies to: the selection, what is named, or what I drew last."""
        r, c = self.r, self.canvas
        named = c.named(r)
        if c.selection and (r.pronoun or not named):
            return c.selection
        if named:
            return named
        if r.this:  # "this" is the asker's selection, and nothing else
            return []
        return c.last_drawing() if (r.pronoun or not (r.kinds or r.group_word)) else []

    def _ask(self, why: str) -> list[dict[str, Any]]:
        return [
            say(
                f"{why} Select what you mean, or name it (“erase the arrows”, "
                "“delete the note saying …”); say “clear the canvas” to remove "
                "everything. I changed nothing."
            )
        ]
