"""`scripted`: a deterministic stand-in for a real model, needing no key.

It reads the request (`reading`) and the canvas the request shows it (`hints`:
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
from collections.abc import AsyncIterator
from typing import Any

from steward.model.base import ModelRequest, Usage, estimate_tokens
from steward.model.scripted.drawing import Drawings
from steward.model.scripted.edits import Edits
from steward.model.scripted.request import say


class ScriptedTurn(Edits, Drawings):
    """One request answered: the intent its words name picks the answer."""

    def actions(self) -> list[dict[str, Any]]:
        handler = getattr(self, f"_{self.r.intent}")
        out: list[dict[str, Any]] = handler()
        return out


class ScriptedModel:
    """The deterministic stand-in model: reads the request and its canvas facts and streams the
    actions a careful model would."""

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
            acts.append(say("All done: everything is connected and labelled."))
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
