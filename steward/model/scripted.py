"""`scripted`: a deterministic stand-in for a real model, needing no key.

It reads the request (`steward.model.reading`) and the canvas the request shows it (`hints`:
viewport, selection, every shape with its text, colour, note and box) and writes the JSON a
careful model would: it uses the user's own words, acts on what is named, clears only when
asked to clear, asks when a destructive request is ambiguous, answers questions in chat,
places new content in free space in the asker's viewport sized to fit it, and says what it
cannot do without a real model. Output streams at a configurable token rate (about 4
characters per token); `tokens_per_s=None` streams as fast as the caller reads, for tests.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from typing import Any

from steward.canvas.bounds import LINE_HEIGHT_EM, Rect, text_extent, union
from steward.canvas.free_space import GAP, Placer, fit_scale
from steward.model.base import ModelRequest, Usage, estimate_tokens
from steward.model.canvas_view import CanvasView, Seen
from steward.model.pictures import Picture, known_subjects, layout, picture_for, scene_for
from steward.model.reading import read

_FLOWS: dict[str, list[str]] = {
    "signup": ["Landing page", "Sign-up form", "Verify email", "Create account", "Welcome"],
    "login": ["Enter email", "Enter password", "Check credentials", "Open dashboard"],
    "checkout": ["Cart", "Shipping", "Payment", "Confirm order", "Receipt"],
    "onboarding": ["Welcome", "Profile", "Preferences", "Invite team", "Done"],
}
_GENERIC_FLOW = ["Start", "Gather input", "Process", "Review", "Finish"]
NEEDS_MODEL = (
    "Without a real model (set STEWARD_MODEL=anthropic:<model> and ANTHROPIC_API_KEY) I can "
    "draw flow charts, sticky notes, text, shapes, arrows and simple pictures, and move, "
    "recolour, align or delete what you name."
)
FONT = 24.0  # tldraw's medium label size, for sizing boxes to their text
PAD = 24.0  # kept between a label and its shape's edge
NOTE = 200.0
STEP_MOVE = 200.0
MIN_SCALE = 0.55  # smaller than this and labels get hard to read: move the view instead


def below_content(
    occupied: dict[str, float] | None, x: int, y: int, w: int, h: int, gap: int
) -> int:
    """A new drawing goes below what is already there when it would overlap it."""
    if not occupied:
        return y
    taken = Rect(*(float(occupied.get(k, 0.0)) for k in ("x", "y", "w", "h")))
    return int(taken.max_y + gap) if taken.intersects(Rect(x, y, w, h)) else y


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:24] or "item"


def _label_box(text: str, min_w: float, max_w: float) -> tuple[float, float, str]:
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


def _grid(n: int, cw: float, ch: float, gap: float) -> list[tuple[float, float]]:
    """Sizes of n cells in rows of n, n-1, … 1 (option i has n - i per row)."""
    out = []
    for k in range(n, 0, -1):
        rows = (n + k - 1) // k
        out.append((k * cw + (k - 1) * gap, rows * ch + (rows - 1) * gap))
    return out


def _say(text: str) -> dict[str, Any]:
    return {"_type": "message", "text": text}


def _listing(shapes: list[Seen], limit: int = 6) -> str:
    names = [f"{s.type} “{s.text}”" if s.text else s.type for s in shapes[:limit]]
    more = f" and {len(shapes) - limit} more" if len(shapes) > limit else ""
    return ", ".join(names) + more


class ScriptedTurn:
    """One request: the reading, the canvas, and where things may go."""

    def __init__(self, hints: dict[str, Any]) -> None:
        self.hints = hints
        self.r = read(str(hints.get("message", "")))
        v = hints.get("viewport") or {"x": 0, "y": 0, "w": 1600, "h": 900}
        self.view = Rect(float(v["x"]), float(v["y"]), float(v["w"]), float(v["h"]))
        self.canvas = CanvasView(hints.get("canvas"), list(hints.get("selection") or []))
        self.n = self.canvas.next_drawing()
        self.placed: list[Rect] = []

    # -- shared steps ------------------------------------------------------------------
    def note(self, what: str) -> str:
        return f"drawing {self.n}: {what}"

    def sid(self, name: str) -> str:
        return f"d{self.n}-{_slug(name)}"

    def place(self, w: float, h: float, *, scalable: bool = False) -> tuple[Rect, float]:
        """Where a w×h drawing goes, and the scale that fits it into the viewport."""
        _, box, scale = self.place_first([(w, h)], scalable=scalable)
        return box, scale

    def place_first(
        self, sizes: list[tuple[float, float]], *, scalable: bool = False
    ) -> tuple[int, Rect, float]:
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

    def anchor_box(self) -> Rect | None:
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

    def show(self, box: Rect) -> list[dict[str, Any]]:
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

    # -- intents -----------------------------------------------------------------------
    def actions(self) -> list[dict[str, Any]]:
        handler = getattr(self, f"_{self.r.intent}")
        out: list[dict[str, Any]] = handler()
        return out

    def _empty(self) -> list[dict[str, Any]]:
        return [
            _say(
                "Tell me what to draw, e.g. “add three sticky notes about goals, plans, "
                "risks” or “draw a flow chart of our signup”."
            )
        ]

    def _unknown(self) -> list[dict[str, Any]]:
        return [_say(f"I did not understand “{self.r.text[:80]}”. {NEEDS_MODEL}")]

    def _question(self) -> list[dict[str, Any]]:
        low, c = self.r.low, self.canvas
        if re.search(r"\b(?:time|date|day)\b", low) and self.hints.get("now"):
            now = str(self.hints["now"])
            return [_say(f"It is {now[11:16]} UTC on {now[:10]} (by the steward's clock).")]
        if re.search(r"\bhow many\b", low):
            shapes = c.of_kinds(self.r.kinds) if self.r.kinds else c.shapes
            what = "/".join(self.r.kinds) + " shapes" if self.r.kinds else "shapes"
            return [
                _say(
                    f"There {'is' if len(shapes) == 1 else 'are'} {len(shapes)} {what} "
                    "on the canvas."
                )
            ]
        if re.search(r"\b(?:canvas|board|here|see|drawn|on (?:the )?screen)\b", low):
            if not c.shapes:
                return [_say("The canvas is empty.")]
            return [_say(f"The canvas has {len(c.shapes)} shapes: {_listing(c.shapes)}.")]
        if re.search(r"\b(?:you do|can you|help|able)\b", low):
            return [_say(NEEDS_MODEL)]
        return [_say(f"I can't answer questions without a real model. {NEEDS_MODEL}")]

    def _clear(self) -> list[dict[str, Any]]:
        return [
            {"_type": "think", "text": "The user asked for an empty canvas."},
            {"_type": "clear"},
            _say("I cleared the canvas, as asked."),
        ]

    def _ask(self, why: str) -> list[dict[str, Any]]:
        return [
            _say(
                f"{why} Select what you mean, or name it (“erase the arrows”, "
                "“delete the note saying …”); say “clear the canvas” to remove "
                "everything. I changed nothing."
            )
        ]

    def _delete(self) -> list[dict[str, Any]]:
        r, c = self.r, self.canvas
        if r.pronoun and c.selection and not (r.kinds or r.quoted):
            doomed = c.selection
        else:
            doomed = c.named(r)
            if c.selection and r.kinds and not r.plural:
                chosen = [s for s in c.selection if s in doomed]
                doomed = chosen or doomed
        if not doomed:
            return self._ask("I am not sure what to delete.")
        if not r.plural and not r.quoted and len(doomed) > 1 and not r.group_word:
            return self._ask(
                f"There are {len(doomed)} matches ({_listing(doomed)}); which one should go?"
            )
        doomed += self.canvas.attached(doomed)
        ids = [s.id for s in doomed]
        return [
            {"_type": "delete", "intent": f"Remove {_listing(doomed, 3)}", "shapeIds": ids},
            _say(f"I deleted {_listing(doomed)}."),
        ]

    def _recolor(self) -> list[dict[str, Any]]:
        shapes = self.targets()
        if not shapes:
            return self._ask("I am not sure what to recolour.")
        color = self.r.color
        acts: list[dict[str, Any]] = [
            {
                "_type": "update",
                "intent": f"Make it {color}",
                "update": {"shapeId": s.id, "color": color},
            }
            for s in shapes
        ]
        acts.append(_say(f"I made {_listing(shapes)} {color}."))
        return acts

    def _move(self) -> list[dict[str, Any]]:
        shapes = self.targets()
        if not shapes:
            return self._ask("I am not sure what to move.")
        dx, dy = self.r.direction or (1, 0)
        ids = {s.id for s in shapes}
        group = union(s.box for s in shapes)
        others = self.canvas.obstacles(skip=ids)
        assert group is not None
        step = STEP_MOVE
        for k in range(1, 20):  # further until the moved shapes land in free space
            step = STEP_MOVE * k
            moved = Rect(group.x + dx * step, group.y + dy * step, group.w, group.h)
            if not any(moved.expand(GAP / 2).intersects(o) for o in others):
                break
        acts: list[dict[str, Any]] = [
            {
                "_type": "move",
                "intent": "Move as asked",
                "shapeId": s.id,
                "x": int(s.at[0] + dx * step),
                "y": int(s.at[1] + dy * step),
            }
            for s in shapes
        ]
        where = {(-1, 0): "left", (1, 0): "right", (0, -1): "up", (0, 1): "down"}[(dx, dy)]
        acts.append(_say(f"I moved {_listing(shapes)} {where} by {int(step)} px."))
        return acts

    def _resize(self) -> list[dict[str, Any]]:
        shapes = self.targets()
        if not shapes:
            return self._ask("I am not sure what to resize.")
        bigger = bool(re.search(r"\b(?:bigger|larger|grow|enlarge)\b", self.r.low))
        f = 1.5 if bigger else 0.67
        box = union(s.box for s in shapes)
        assert box is not None
        ids = [s.id for s in shapes]
        how = "bigger" if bigger else "smaller"
        return [
            {
                "_type": "resize",
                "intent": "Resize as asked",
                "shapeIds": ids,
                "scaleX": f,
                "scaleY": f,
                "originX": int(box.x),
                "originY": int(box.y),
            },
            _say(f"I made {_listing(shapes)} {how}."),
        ]

    def _layout(
        self, verb: str, need: int, extra: dict[str, Any], done: str
    ) -> list[dict[str, Any]]:
        shapes = [s for s in self.targets() if s.type not in ("arrow", "line")]
        if len(shapes) < need:
            return self._ask(f"I need at least {need} shapes to {verb}.")
        return [
            {"_type": verb, "intent": done, "shapeIds": [s.id for s in shapes], **extra},
            _say(f"{done}: {_listing(shapes)}."),
        ]

    def _align(self) -> list[dict[str, Any]]:
        return self._layout("align", 2, {"alignment": "top"}, "Aligned their tops")

    def _distribute(self) -> list[dict[str, Any]]:
        return self._layout("distribute", 3, {"direction": "horizontal"}, "Spaced them evenly")

    def _stack(self) -> list[dict[str, Any]]:
        return self._layout("stack", 2, {"direction": "vertical", "gap": 24}, "Stacked them")

    def _label(self) -> list[dict[str, Any]]:
        shapes = self.canvas.selection or self.canvas.last_drawing()[:1]
        text = " ".join(self.r.items)
        if not shapes or not text:
            return self._ask("I am not sure what to label, or with which words.")
        return [
            {"_type": "label", "intent": "Label as asked", "shapeId": shapes[0].id, "text": text},
            _say(f"I labelled it “{text}”."),
        ]

    def _connect(self) -> list[dict[str, Any]]:
        low = self.r.low
        m = re.search(r"\b(?:connect|link|join|from)\s+(.+?)\s+(?:to|with|and)\s+(.+)$", low)
        ends: list[Seen] = []
        if m:
            for phrase in m.groups():
                hit = self.canvas.with_text(read(phrase))
                if hit:
                    ends.append(hit[0])
        if len(ends) < 2:
            ends = self.canvas.selection[:2]
        if len(ends) < 2 or ends[0].id == ends[1].id:
            return self._ask("I could not tell which two shapes to connect.")
        a, b = ends[0].box, ends[1].box
        x1, y1 = (a.max_x, a.mid_y) if b.x >= a.max_x else (a.mid_x, a.max_y)
        x2, y2 = (b.x, b.mid_y) if b.x >= a.max_x else (b.mid_x, b.y)
        return [
            {
                "_type": "create",
                "intent": "Connect them",
                "shape": {
                    "_type": "arrow",
                    "shapeId": self.sid("arrow"),
                    "x1": int(x1),
                    "y1": int(y1),
                    "x2": int(x2),
                    "y2": int(y2),
                    "fromId": ends[0].id,
                    "toId": ends[1].id,
                    "color": self.r.color or "black",
                    "note": self.note("arrow"),
                },
            },
            _say(f"I connected {_listing(ends)} with an arrow."),
        ]

    # -- creating ----------------------------------------------------------------------
    def _flowchart(self) -> list[dict[str, Any]]:
        low = self.r.low.replace("-", "").replace("sign up", "signup").replace("log in", "login")
        topic = next((k for k in _FLOWS if k in low), None)
        steps = self.r.items or _FLOWS.get(topic or "", _GENERIC_FLOW)
        steps = [s[:1].upper() + s[1:] for s in steps]
        boxes = [_label_box(s, 180, 260) for s in steps]
        w = max(b[0] for b in boxes)
        h = max(b[1] for b in boxes)
        # Layouts from one long row to one column; the first that fits in free space wins.
        options = [(k, gap) for k in range(len(steps), 0, -1) for gap in (80.0, 50.0)]
        sizes = []
        for k, gap in options:
            rows = (len(steps) + k - 1) // k
            sizes.append((k * w + (k - 1) * gap, rows * h + (rows - 1) * gap))
        pick, area, s = self.place_first(sizes)
        per_row, gap = options[pick]
        rows = (len(steps) + per_row - 1) // per_row
        w, h, gap = w * s, h * s, gap * s
        color = self.r.color
        what = f"flow chart of {topic or 'the process'}"
        acts: list[dict[str, Any]] = [
            {
                "_type": "update-todo-list",
                "id": 1,
                "status": "in-progress",
                "text": "Draw the steps",
            },
            {"_type": "update-todo-list", "id": 2, "status": "todo", "text": "Connect with arrows"},
            {"_type": "update-todo-list", "id": 3, "status": "todo", "text": "Review the layout"},
            {
                "_type": "think",
                "text": f"{len(steps)} steps in {rows} row(s) of {per_row}, "
                f"{int(w)}x{int(h)} boxes, placed in free space in the viewport.",
            },
        ]
        cells: list[Rect] = []
        for i, step in enumerate(steps):
            row, col = divmod(i, per_row)
            if row % 2:  # a snake: the next row runs back, so every arrow is short
                col = per_row - 1 - col
            cell = Rect(area.x + col * (w + gap), area.y + row * (h + gap), w, h)
            cells.append(cell)
            kind = "ellipse" if i in (0, len(steps) - 1) else "rectangle"
            acts.append(
                {
                    "_type": "create",
                    "intent": f"Step {i + 1}: {step}",
                    "shape": {
                        "_type": kind,
                        "shapeId": self.sid(f"step-{step}"),
                        "x": int(cell.x),
                        "y": int(cell.y),
                        "w": int(cell.w),
                        "h": int(cell.h),
                        "color": color or ("green" if i == 0 else "blue"),
                        "fill": "tint",
                        "text": step,
                        "note": self.note(what),
                    },
                }
            )
        acts.append(
            {"_type": "update-todo-list", "id": 1, "status": "done", "text": "Draw the steps"}
        )
        acts.append(
            {
                "_type": "update-todo-list",
                "id": 2,
                "status": "in-progress",
                "text": "Connect with arrows",
            }
        )
        for i in range(len(steps) - 1):
            a, b = cells[i], cells[i + 1]
            if abs(a.y - b.y) < 1:
                x1, x2 = (a.max_x, b.x) if b.x > a.x else (a.x, b.max_x)
                y1 = y2 = a.mid_y
            else:
                x1 = x2 = a.mid_x
                y1, y2 = a.max_y, b.y
            acts.append(
                {
                    "_type": "create",
                    "intent": "Connect steps",
                    "shape": {
                        "_type": "arrow",
                        "shapeId": self.sid(f"arrow-{i + 1}"),
                        "x1": int(x1),
                        "y1": int(y1),
                        "x2": int(x2),
                        "y2": int(y2),
                        "fromId": self.sid(f"step-{steps[i]}"),
                        "toId": self.sid(f"step-{steps[i + 1]}"),
                        "color": "black",
                        "note": self.note(what),
                    },
                }
            )
        acts.append(
            {"_type": "update-todo-list", "id": 2, "status": "done", "text": "Connect with arrows"}
        )
        acts.append(
            {
                "_type": "review",
                "intent": "Check arrows and labels",
                "x": int(area.x - 40),
                "y": int(area.y - 40),
                "w": int(area.w + 80),
                "h": int(area.h + 80),
            }
        )
        acts += self.show(area)
        acts.append(_say(f"I drew a {len(steps)}-step flow chart: " + " → ".join(steps) + "."))
        return acts

    def _notes(self) -> list[dict[str, Any]]:
        texts = self.r.items or [""] * (self.r.count or 1)
        color = self.r.color or "yellow"
        sizes = [(NOTE, NOTE) if len(t) <= 48 else _label_box(t, NOTE, 360)[:2] for t in texts]
        cw = max(s[0] for s in sizes)
        ch = max(s[1] for s in sizes)
        pick, area, s = self.place_first(_grid(len(texts), cw, ch, GAP))
        per_row = len(texts) - pick
        acts: list[dict[str, Any]] = [
            {
                "_type": "think",
                "text": f"{len(texts)} note(s) with the user's words, in free space.",
            }
        ]
        for i, t in enumerate(texts):
            row, col = divmod(i, per_row)
            x = area.x + col * (cw + GAP) * s
            y = area.y + row * (ch + GAP) * s
            if sizes[i][0] > NOTE:  # too long for a sticky note: a yellow card that fits it
                shape: dict[str, Any] = {
                    "_type": "rectangle",
                    "w": int(sizes[i][0] * s),
                    "h": int(sizes[i][1] * s),
                    "fill": "solid",
                }
            else:
                shape = {"_type": "note"}
            shape |= {
                "shapeId": self.sid(f"note-{t or i + 1}"),
                "x": int(x),
                "y": int(y),
                "text": t,
                "color": color,
                "note": self.note("notes"),
            }
            acts.append({"_type": "create", "intent": f"Note: {t[:40]}", "shape": shape})
        acts += self.show(area)
        said = ", ".join(f"“{t}”" for t in texts if t)
        acts.append(
            _say(
                f"I added {len(texts)} sticky note{'s' if len(texts) > 1 else ''}"
                + (f": {said}." if said else " (empty: type into it).")
            )
        )
        return acts

    def _text(self) -> list[dict[str, Any]]:
        text = " ".join(self.r.items)
        if not text:
            return self._ask("What should the text say? Put it in quotes.")
        tw, th = text_extent(text, FONT)
        area, _ = self.place(tw, max(th, LINE_HEIGHT_EM * FONT))
        return [
            {
                "_type": "create",
                "intent": "Write it",
                "shape": {
                    "_type": "text",
                    "shapeId": self.sid(f"text-{text}"),
                    "x": int(area.x),
                    "y": int(area.y),
                    "text": text,
                    "color": self.r.color or "black",
                    "note": self.note("text"),
                },
            },
            *self.show(area),
            _say(f"I wrote “{text}”."),
        ]

    def _shape(self) -> list[dict[str, Any]]:
        kind = self.r.geo or "rectangle"
        labels = self.r.items or [""] * (self.r.count or 1)
        boxes = [_label_box(t, 160, 300)[:2] if t else (160.0, 160.0) for t in labels]
        cw = max(max(b[0] for b in boxes), 160.0)
        ch = max(max(b[1] for b in boxes), 160.0 if kind != "rectangle" else 100.0)
        if kind in ("ellipse", "star", "heart", "triangle", "diamond", "hexagon", "cloud"):
            cw = ch = max(cw, ch) * (1.4 if any(labels) else 1.0)  # labels sit in the middle
        n = len(labels)
        pick, area, s = self.place_first(_grid(n, cw, ch, GAP))
        per_row = n - pick
        acts: list[dict[str, Any]] = []
        for i, t in enumerate(labels):
            row, col = divmod(i, per_row)
            shape = {
                "_type": kind,
                "shapeId": self.sid(f"{kind}-{t or i + 1}"),
                "x": int(area.x + col * (cw + GAP) * s),
                "y": int(area.y + row * (ch + GAP) * s),
                "w": int(cw * s),
                "h": int(ch * s),
                "color": self.r.color or "blue",
                "fill": "tint",
                "note": self.note(kind),
            }
            if t:
                shape["text"] = t
            acts.append({"_type": "create", "intent": f"A {kind}", "shape": shape})
        acts += self.show(area)
        name = kind if n == 1 else f"{n} {kind}s"
        said = f" labelled {', '.join(f'“{t}”' for t in labels)}" if any(labels) else ""
        color = f"{self.r.color} " if self.r.color else ""
        acts.append(_say(f"I drew {'a ' if n == 1 else ''}{color}{name}{said}."))
        return acts

    def _picture(self) -> list[dict[str, Any]]:
        subject = self.r.subject or self.r.low
        scene = scene_for(subject)
        pictures: list[Picture]
        if scene is not None:
            pictures = scene[1]
            what = scene[0]
        else:
            one = picture_for(subject)
            if one is None:
                can = ", ".join(known_subjects())
                return [
                    _say(
                        f"I can't draw “{subject[:60]}” without a real model. Offline I "
                        f"can draw: {can}. {NEEDS_MODEL}"
                    )
                ]
            pictures = [one] * min(self.r.count or 1, 6)
            what = one.name
        size = 240.0
        total_w = len(pictures) * size + (len(pictures) - 1) * GAP
        area, s = self.place(total_w, size, scalable=True)
        acts: list[dict[str, Any]] = [
            {
                "_type": "think",
                "text": f"A simple {what} from shapes that nest or sit side by side.",
            }
        ]
        for i, pic in enumerate(pictures):
            x = area.x + i * (size + GAP) * s
            cell = Rect(x, area.y, size * s, size * s)
            acts += self.picture(pic, cell, self.sid(f"{pic.name}{i + 1}"), self.r.color)
        acts += self.show(area)
        acts.append(
            _say(
                f"I drew a simple {what}"
                + (f" ({', '.join(p.name for p in pictures)})." if scene else ".")
            )
        )
        return acts

    def picture(
        self, pic: Picture, box: Rect, prefix: str, color: str | None = None
    ) -> list[dict[str, Any]]:
        """Creates for the picture's parts fitted into `box`, ids `<prefix>-<n>`."""
        acts = []
        for j, (kind, x, y, w, h, c, fill) in enumerate(layout(pic, box.x, box.y, box.w, box.h)):
            acts.append(
                {
                    "_type": "create",
                    "intent": f"{pic.name} part {j + 1}",
                    "shape": {
                        "_type": kind,
                        "shapeId": f"{prefix}-{j + 1}",
                        "x": int(x),
                        "y": int(y),
                        "w": int(w),
                        "h": int(h),
                        "color": color if color and j == 0 else c,
                        "fill": fill,
                        "note": self.note(pic.name),
                    },
                }
            )
        return acts


class ScriptedModel:
    name = "scripted"

    def __init__(self, tokens_per_s: float | None = 400.0, chunk_chars: int = 4) -> None:
        self.tokens_per_s = tokens_per_s
        self.chunk_chars = chunk_chars

    def actions_for(self, hints: dict[str, Any]) -> list[dict[str, Any]]:
        followup = hints.get("followup")
        if followup:
            todo = hints.get("todo") or []
            acts: list[dict[str, Any]] = [
                {"_type": "think", "text": f"Checking the result of: {followup}."}
            ]
            acts += [
                {"_type": "update-todo-list", "id": t["id"], "status": "done", "text": t["text"]}
                for t in todo
                if t.get("status") != "done"
            ]
            acts.append(_say("All done: everything is connected and labelled."))
            return acts
        return ScriptedTurn(hints).actions()

    def response_text(self, hints: dict[str, Any]) -> str:
        body = ", ".join(json.dumps(a, ensure_ascii=False) for a in self.actions_for(hints))
        return body + "]}"  # continues the prefill `{"actions": [`

    # -- streaming -----------------------------------------------------------------------
    async def stream(self, request: ModelRequest, usage: Usage) -> AsyncIterator[str]:
        text = self.response_text(request.hints)
        usage.input_tokens += sum(estimate_tokens(s) for s in request.system) + sum(
            estimate_tokens(str(b.get("text", ""))) for b in request.user
        )
        step = self.chunk_chars
        for i in range(0, len(text), step):
            chunk = text[i : i + step]
            usage.output_tokens += 1
            if self.tokens_per_s:
                await asyncio.sleep(1.0 / self.tokens_per_s)
            else:
                await asyncio.sleep(0)  # stay cancellable
            yield chunk
