"""`replay:<file>`: stream a recorded response (raw text, or JSON lines of {"text": chunk}).

A transcript (JSON lines of {"turn": n, "text": response}, as the model by hand writes it)
holds one whole response per line: the calls of one process take them in order, one each.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

from steward.model.base import ModelError, ModelRequest, Usage, estimate_tokens

# How many turns of each transcript this process has replayed: runs build a model each.
_turns_taken: dict[Path, int] = {}


class ReplayModel:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.name = f"replay:{self.path}"

    def chunks(self) -> list[str]:
        try:
            raw = self.path.read_text(encoding="utf-8")
        except OSError as err:
            raise ModelError(f"cannot read replay file {self.path}: {err}") from err
        if self.path.suffix == ".jsonl":
            items = [json.loads(line) for line in raw.splitlines() if line.strip()]
            if items and all(isinstance(i, dict) and "turn" in i for i in items):
                return [self._next_turn(items)]
            return [str(i.get("text", "")) if isinstance(i, dict) else str(i) for i in items]
        return [raw[i : i + 16] for i in range(0, len(raw), 16)]

    def _next_turn(self, items: list[dict[str, object]]) -> str:
        key = self.path.resolve()
        taken = _turns_taken.get(key, 0)
        if taken >= len(items):
            raise ModelError(f"replay transcript {self.path} has no turn {taken + 1}")
        _turns_taken[key] = taken + 1
        return str(items[taken].get("text", ""))

    async def stream(self, request: ModelRequest, usage: Usage) -> AsyncIterator[str]:
        chunks = self.chunks()
        # A recording may include the prefill; the caller feeds the prefill itself.
        if chunks and "".join(chunks).lstrip().startswith(request.prefill):
            text = "".join(chunks).lstrip()[len(request.prefill) :]
            chunks = [text[i : i + 16] for i in range(0, len(text), 16)]
        usage.input_tokens += sum(estimate_tokens(s) for s in request.system)
        for chunk in chunks:
            usage.output_tokens += estimate_tokens(chunk)
            yield chunk
