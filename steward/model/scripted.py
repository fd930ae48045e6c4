"""`scripted`: a deterministic stand-in for a real model, needing no key.

It reads the request text and a few hints (viewport, selection, follow-up kind) and writes
the JSON a capable model would: a todo list, thoughts, shapes, arrows and labels, a review,
and a closing message. Output streams at a configurable token rate (about 4 characters per
token); `tokens_per_s=None` streams as fast as the caller reads, for tests.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from typing import Any

from steward.canvas.bounds import Rect
from steward.model.base import ModelRequest, Usage, estimate_tokens

_FLOWS: dict[str, list[str]] = {
    "signup": ["Landing page", "Sign-up form", "Verify email", "Create account", "Welcome"],
    "login": ["Enter email", "Enter password", "Check credentials", "Open dashboard"],
    "checkout": ["Cart", "Shipping", "Payment", "Confirm order", "Receipt"],
    "onboarding": ["Welcome", "Profile", "Preferences", "Invite team", "Done"],
}
_GENERIC_FLOW = ["Start", "Gather input", "Process", "Review", "Finish"]
_SHAPE_WORDS = {
    "circle": "ellipse", "ellipse": "ellipse", "rectangle": "rectangle", "box": "rectangle",
    "square": "rectangle", "triangle": "triangle", "star": "star", "diamond": "diamond",
    "cloud": "cloud", "heart": "heart", "hexagon": "hexagon",
}  # fmt: skip
_COLORS = ("red", "blue", "green", "yellow", "orange", "violet", "black", "grey")


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


class ScriptedModel:
    name = "scripted"

    def __init__(self, tokens_per_s: float | None = 400.0, chunk_chars: int = 4) -> None:
        self.tokens_per_s = tokens_per_s
        self.chunk_chars = chunk_chars
        self._occupied: dict[str, float] | None = None

    # -- planning ------------------------------------------------------------------------
    def actions_for(self, hints: dict[str, Any]) -> list[dict[str, Any]]:
        self._occupied = hints.get("occupied")
        message = str(hints.get("message", "")).strip()
        low = message.lower()
        followup = hints.get("followup")
        view = hints.get("viewport") or {"x": 0, "y": 0, "w": 1600, "h": 900}
        cx = int(view["x"] + view["w"] / 2)
        cy = int(view["y"] + view["h"] / 2)
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
            acts.append(
                {"_type": "message", "text": "All done: everything is connected and labelled."}
            )
            return acts
        color = next((c for c in _COLORS if re.search(rf"\b{c}\b", low)), None)
        if re.search(r"flow ?chart|diagram|process|flow\b|steps", low):
            return self._flowchart(low, cx, cy, color)
        if re.search(r"\b(clear|erase|delete everything|wipe)\b", low):
            return [
                {"_type": "think", "text": "The user wants an empty canvas."},
                {"_type": "clear"},
                {"_type": "message", "text": "I cleared the canvas."},
            ]
        if color and re.search(r"\b(make|turn|colou?r|paint)\b", low) and "this" in low:
            return self._recolour(list(hints.get("selection") or []), color)
        sel = list(hints.get("selection") or hints.get("shapes") or [])
        if re.search(r"\balign\b", low) and len(sel) >= 2:
            return [
                {"_type": "align", "intent": "Line them up", "shapeIds": sel, "alignment": "top"},
                {"_type": "message", "text": f"Aligned {len(sel)} shapes along their tops."},
            ]
        if re.search(r"\b(distribute|space out)\b", low) and len(sel) >= 3:
            return [
                {"_type": "distribute", "intent": "Even gaps", "shapeIds": sel,
                 "direction": "horizontal"},
                {"_type": "message", "text": f"Spaced {len(sel)} shapes evenly."},
            ]  # fmt: skip
        if re.search(r"\bstack\b", low) and len(sel) >= 2:
            return [
                {"_type": "stack", "intent": "Stack", "shapeIds": sel, "direction": "vertical",
                 "gap": 24},
                {"_type": "message", "text": f"Stacked {len(sel)} shapes."},
            ]  # fmt: skip
        if re.search(r"\b(sticky|note)s?\b", low):
            words = [w for w in re.findall(r"[a-z]+", low) if len(w) > 3][:3] or ["idea"]
            acts = [{"_type": "think", "text": "A few sticky notes in a row."}]
            for i, w in enumerate(words):
                acts.append({"_type": "create", "intent": f"Note {w}", "shape": {
                    "_type": "note", "shapeId": f"note-{i + 1}", "x": cx - 330 + i * 230,
                    "y": cy - 100, "text": w.capitalize(),
                    "color": color or "yellow"}})  # fmt: skip
            acts.append({"_type": "message", "text": f"Added {len(words)} sticky notes."})
            return acts
        if re.search(r"\b(draw|sketch)\b", low) and not any(w in low for w in _SHAPE_WORDS):
            pts = [{"x": cx - 100 + i * 20, "y": cy + (40 if i % 2 else -40)} for i in range(11)]
            return [
                {"_type": "think", "text": "A freehand zigzag will do."},
                {"_type": "pen", "intent": "Sketch", "points": pts, "style": "straight",
                 "color": color or "black"},
                {"_type": "message", "text": "Here is a quick sketch."},
            ]  # fmt: skip
        kind = next((v for k, v in _SHAPE_WORDS.items() if re.search(rf"\b{k}s?\b", low)), None)
        if kind:
            return [
                {"_type": "create", "intent": f"A {kind}", "shape": {
                    "_type": kind, "shapeId": f"{kind}-1", "x": cx - 100, "y": cy - 100,
                    "w": 200, "h": 200, "color": color or "blue", "fill": "tint"}},
                {"_type": "message", "text": f"I drew a {color + ' ' if color else ''}{kind}."},
            ]  # fmt: skip
        return [
            {"_type": "think", "text": "No drawing asked for; I will note the request."},
            {"_type": "create", "intent": "Write it down", "shape": {
                "_type": "text", "shapeId": "note-text", "x": cx - 150, "y": cy,
                "text": message[:120] or "Hello!", "color": color or "black"}},
            {"_type": "message", "text": "I wrote that on the canvas."},
        ]  # fmt: skip

    @staticmethod
    def _recolour(selection: list[str], color: str) -> list[dict[str, Any]]:
        """ "Make this blue": "this" is the asker's selection, and nothing else."""
        if not selection:
            return [{"_type": "message", "text": f"Select what should be {color} first."}]
        acts: list[dict[str, Any]] = [
            {"_type": "update", "intent": f"Make it {color}",
             "update": {"shapeId": sid, "color": color}}
            for sid in selection
        ]  # fmt: skip
        acts.append({"_type": "message", "text": f"Made {len(selection)} shape(s) {color}."})
        return acts

    def _flowchart(self, low: str, cx: int, cy: int, color: str | None) -> list[dict[str, Any]]:
        topic = next((k for k in _FLOWS if k in low.replace("-", "").replace(" up", "up")), None)
        steps = _FLOWS.get(topic or "", _GENERIC_FLOW)
        w, h, gap = 220, 110, 80
        total = len(steps) * w + (len(steps) - 1) * gap
        x0, y = cx - total // 2, cy - h // 2
        y = below_content(self._occupied, x0, y, total, h, gap)
        acts: list[dict[str, Any]] = [
            {"_type": "update-todo-list", "id": 1, "status": "in-progress",
             "text": "Draw the steps"},
            {"_type": "update-todo-list", "id": 2, "status": "todo", "text": "Connect with arrows"},
            {"_type": "update-todo-list", "id": 3, "status": "todo", "text": "Review the layout"},
            {"_type": "think", "text": f"A left-to-right flow of {len(steps)} steps, "
             f"{w}x{h} boxes with {gap}px gaps, centred in the viewport."},
        ]  # fmt: skip
        ids = []
        for i, step in enumerate(steps):
            sid = f"step-{_slug(step)}"
            ids.append(sid)
            kind = "ellipse" if i in (0, len(steps) - 1) else "rectangle"
            acts.append({"_type": "create", "intent": f"Step {i + 1}: {step}", "shape": {
                "_type": kind, "shapeId": sid, "x": x0 + i * (w + gap), "y": y, "w": w, "h": h,
                "color": color or ("green" if i == 0 else "blue"), "fill": "tint",
                "text": step, "note": f"flow step {i + 1}"}})  # fmt: skip
        acts.append(
            {"_type": "update-todo-list", "id": 1, "status": "done", "text": "Draw the steps"}
        )
        acts.append({"_type": "update-todo-list", "id": 2, "status": "in-progress",
                     "text": "Connect with arrows"})  # fmt: skip
        for i in range(len(steps) - 1):
            x1 = x0 + i * (w + gap) + w
            acts.append({"_type": "create", "intent": "Connect steps", "shape": {
                "_type": "arrow", "shapeId": f"arrow-{i + 1}", "x1": x1, "y1": cy,
                "x2": x1 + gap, "y2": cy, "fromId": ids[i], "toId": ids[i + 1],
                "color": "black"}})  # fmt: skip
        acts.append({"_type": "update-todo-list", "id": 2, "status": "done",
                     "text": "Connect with arrows"})  # fmt: skip
        acts.append({"_type": "label", "intent": "Title", "shapeId": ids[0],
                     "text": f"{steps[0]} (start)"})  # fmt: skip
        acts.append({"_type": "review", "intent": "Check arrows and labels", "x": x0 - 40,
                     "y": y - 40, "w": total + 80, "h": h + 80})  # fmt: skip
        acts.append({"_type": "message", "text": f"I drew a {len(steps)}-step flow chart: "
                     + " → ".join(steps) + "."})  # fmt: skip
        return acts

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
