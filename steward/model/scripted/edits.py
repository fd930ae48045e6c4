"""The scripted model's answers that change or describe what is there: questions, clear,
delete, recolour, move, resize, align/distribute/stack, label, connect."""

from __future__ import annotations

import re
from typing import Any

from steward.canvas.free_space import GAP
from steward.model.scripted.reading import read
from steward.model.scripted.request import (
    NEEDS_MODEL,
    STEP_MOVE,
    ScriptedRequest,
    listing,
    say,
)
from steward.model.scripted.seen import Seen
from steward.protocol.box import Box, union


class Edits(ScriptedRequest):
    """Intents that answer in chat or act on shapes already on the canvas."""

    def _empty(self) -> list[dict[str, Any]]:
        return [
            say(
                "Tell me what to draw, e.g. “add three sticky notes about goals, plans, "
                "risks” or “draw a flow chart of our signup”."
            )
        ]

    def _unknown(self) -> list[dict[str, Any]]:
        return [say(f"I did not understand “{self.r.text[:80]}”. {NEEDS_MODEL}")]

    def _question(self) -> list[dict[str, Any]]:
        low, c = self.r.low, self.canvas
        if re.search(r"\b(?:time|date|day)\b", low) and self.hints.get("now"):
            now = str(self.hints["now"])
            return [say(f"It is {now[11:16]} UTC on {now[:10]} (by the steward's clock).")]
        if re.search(r"\bhow many\b", low):
            shapes = c.of_kinds(self.r.kinds) if self.r.kinds else c.shapes
            what = "/".join(self.r.kinds) + " shapes" if self.r.kinds else "shapes"
            return [
                say(
                    f"There {'is' if len(shapes) == 1 else 'are'} {len(shapes)} {what} "
                    "on the canvas."
                )
            ]
        if re.search(r"\b(?:canvas|board|here|see|drawn|on (?:the )?screen)\b", low):
            if not c.shapes:
                return [say("The canvas is empty.")]
            return [say(f"The canvas has {len(c.shapes)} shapes: {listing(c.shapes)}.")]
        if re.search(r"\b(?:you do|can you|help|able)\b", low):
            return [say(NEEDS_MODEL)]
        return [say(f"I can't answer questions without a real model. {NEEDS_MODEL}")]

    def _clear(self) -> list[dict[str, Any]]:
        return [
            {"_type": "think", "text": "The user asked for an empty canvas."},
            {"_type": "clear"},
            say("I cleared the canvas, as asked."),
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
                f"There are {len(doomed)} matches ({listing(doomed)}); which one should go?"
            )
        doomed += self.canvas.attached(doomed)
        ids = [s.id for s in doomed]
        return [
            {"_type": "delete", "intent": f"Remove {listing(doomed, 3)}", "shapeIds": ids},
            say(f"I deleted {listing(doomed)}."),
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
        acts.append(say(f"I made {listing(shapes)} {color}."))
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
            moved = Box(group.x + dx * step, group.y + dy * step, group.w, group.h)
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
        acts.append(say(f"I moved {listing(shapes)} {where} by {int(step)} px."))
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
            say(f"I made {listing(shapes)} {how}."),
        ]

    def _layout(
        self, verb: str, need: int, extra: dict[str, Any], done: str
    ) -> list[dict[str, Any]]:
        shapes = [s for s in self.targets() if s.type not in ("arrow", "line")]
        if len(shapes) < need:
            return self._ask(f"I need at least {need} shapes to {verb}.")
        return [
            {"_type": verb, "intent": done, "shapeIds": [s.id for s in shapes], **extra},
            say(f"{done}: {listing(shapes)}."),
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
            say(f"I labelled it “{text}”."),
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
            say(f"I connected {listing(ends)} with an arrow."),
        ]
