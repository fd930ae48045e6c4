"""The scripted model's answers that draw something new: flow charts, sticky notes, text,
shapes and simple pictures, each placed in free space and sized to its words."""

from __future__ import annotations

from typing import Any

from steward.canvas.bounds import LINE_HEIGHT_EM, text_extent
from steward.canvas.free_space import GAP
from steward.model.scripted.pictures import Picture, known_subjects, layout, picture_for, scene_for
from steward.model.scripted.request import FONT, NEEDS_MODEL, ScriptedRequest, label_box, say
from steward.protocol.box import Box

_FLOWS: dict[str, list[str]] = {
    "signup": ["Landing page", "Sign-up form", "Verify email", "Create account", "Welcome"],
    "login": ["Enter email", "Enter password", "Check credentials", "Open dashboard"],
    "checkout": ["Cart", "Shipping", "Payment", "Confirm order", "Receipt"],
    "onboarding": ["Welcome", "Profile", "Preferences", "Invite team", "Done"],
}
_GENERIC_FLOW = ["Start", "Gather input", "Process", "Review", "Finish"]
NOTE = 200.0


def _grid(n: int, cw: float, ch: float, gap: float) -> list[tuple[float, float]]:
    """Sizes of n cells in rows of n, n-1, … 1 (option i has n - i per row)."""
    out = []
    for k in range(n, 0, -1):
        rows = (n + k - 1) // k
        out.append((k * cw + (k - 1) * gap, rows * ch + (rows - 1) * gap))
    return out


class Drawings(ScriptedRequest):
    """Intents that create shapes."""

    def _flowchart(self) -> list[dict[str, Any]]:
        low = self.r.low.replace("-", "").replace("sign up", "signup").replace("log in", "login")
        topic = next((k for k in _FLOWS if k in low), None)
        steps = self.r.items or _FLOWS.get(topic or "", _GENERIC_FLOW)
        steps = [s[:1].upper() + s[1:] for s in steps]
        boxes = [label_box(s, 180, 260) for s in steps]
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
        cells: list[Box] = []
        for i, step in enumerate(steps):
            row, col = divmod(i, per_row)
            if row % 2:  # a snake: the next row runs back, so every arrow is short
                col = per_row - 1 - col
            cell = Box(area.x + col * (w + gap), area.y + row * (h + gap), w, h)
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
        acts.append(say(f"I drew a {len(steps)}-step flow chart: " + " → ".join(steps) + "."))
        return acts

    def _notes(self) -> list[dict[str, Any]]:
        texts = self.r.items or [""] * (self.r.count or 1)
        color = self.r.color or "yellow"
        sizes = [(NOTE, NOTE) if len(t) <= 48 else label_box(t, NOTE, 360)[:2] for t in texts]
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
            say(
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
            say(f"I wrote “{text}”."),
        ]

    def _shape(self) -> list[dict[str, Any]]:
        kind = self.r.geo or "rectangle"
        labels = self.r.items or [""] * (self.r.count or 1)
        boxes = [label_box(t, 160, 300)[:2] if t else (160.0, 160.0) for t in labels]
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
        acts.append(say(f"I drew {'a ' if n == 1 else ''}{color}{name}{said}."))
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
                    say(
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
            cell = Box(x, area.y, size * s, size * s)
            acts += self.picture(pic, cell, self.sid(f"{pic.name}{i + 1}"), self.r.color)
        acts += self.show(area)
        acts.append(
            say(
                f"I drew a simple {what}"
                + (f" ({', '.join(p.name for p in pictures)})." if scene else ".")
            )
        )
        return acts

    def picture(
        self, pic: Picture, box: Box, prefix: str, color: str | None = None
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
