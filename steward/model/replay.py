"""`replay:<file>`: stream a recorded response (raw text, or JSON lines of {"text": chunk}).

A transcript (JSON lines of {"turn": n, "text": response}, as the model by hand writes it)
holds one whole response per line: the calls of one process take them in order, one each.
A line may also name the fairy that asked ({"fairy": "fairy-2"}): a call from that fairy
(its request's hints say which) then takes the first line not yet taken that names it or
names no fairy (a call from no fairy takes only lines naming none), so a project's drones,
which ask in whatever order they finish, each get their own answers.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

from steward.model.base import ModelError, ModelRequest, Usage, estimate_tokens

# Which turns (line indexes) of each transcript this process has replayed: runs build a
# model each, so the count lives here.
_turns_taken: dict[Path, set[int]] = {}


class ReplayModel:
    """A model provider that streams a recorded response or transcript from a file, in order."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.name = f"replay:{self.path}"

    def chunks(self, request: ModelRequest | None = None) -> list[str]:
        try:
            raw = self.path.read_text(encoding="utf-8")
        except OSError as err:
            raise ModelError(f"cannot read replay file {self.path}: {err}") from err
        if self.path.suffix == ".jsonl":
            items = [json.loads(line) for line in raw.splitlines() if line.strip()]
            if items and all(isinstance(i, dict) and "turn" in i for i in items):
                return [self._next_turn(items, _asker(request))]
            return [str(i.get("text", "")) if isinstance(i, dict) else str(i) for i in items]
        return [raw[i : i + 16] for i in range(0, len(raw), 16)]

    def _next_turn(self, items: list[dict[str, object]], asker: str | None) -> str:
        taken = _turns_taken.setdefault(self.path.resolve(), set())
        for i, item in enumerate(items):
            if i in taken:
                continue
            fairy = item.get("fairy")
            if fairy is None or fairy == asker:
                taken.add(i)
                return str(item.get("text", ""))
        who = f" for {asker}" if asker else ""
        raise ModelError(f"replay transcript {self.path} has no turn {len(taken) + 1}{who}")

    async def stream(self, request: ModelRequest, usage: Usage) -> AsyncIterator[str]:
        chunks = self.chunks(request)
        # A recording may include the prefill; the caller feeds the prefill itself.
        if chunks and "".join(chunks).lstrip().startswith(request.prefill):
            text = "".join(chunks).lstrip()[len(request.prefill) :]
            chunks = [text[i : i + 16] for i in range(0, len(text), 16)]
        usage.input_tokens += sum(estimate_tokens(s) for s in request.system)
        for chunk in chunks:
            usage.output_tokens += estimate_tokens(chunk)
            yield chunk


def _asker(request: ModelRequest | None) -> str | None:
    """The fairy a request comes from, as the fairies' requests name it in their hints."""
    fairy = request.hints.get("fairy") if request is not None else None
    asker = fairy.get("fairy_id") if isinstance(fairy, dict) else None
    return asker if isinstance(asker, str) and asker else None
