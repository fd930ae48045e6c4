"""`replay:<file>`: stream a recorded response (raw text, or JSON lines of {"text": chunk})."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

from steward.model.base import ModelError, ModelRequest, Usage, estimate_tokens


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
            out = []
            for line in raw.splitlines():
                if line.strip():
                    item = json.loads(line)
                    out.append(str(item.get("text", "")) if isinstance(item, dict) else str(item))
            return out
        return [raw[i : i + 16] for i in range(0, len(raw), 16)]

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
