"""The canned model provider that tests and benches run agents on.

It answers request n with the n-th canned text (the last one again once they run out), or
with what `answer` writes for the request, streamed in pieces of `chunk` characters (or in
the `pieces` given, the same for every request), optionally after a silence and with a gap
before each piece; one output token is counted per piece. It keeps every request it was
sent, so a test can read what the agent asked.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

from steward.model.base import ModelRequest, Usage


@dataclass
class CannedModel:
    """A model provider that streams canned texts (or what `answer` writes), recording every
    request."""

    texts: list[str] = field(default_factory=list)
    chunk: int = 5
    pieces: list[str] | None = None  # given: streamed as is, for every request
    answer: Callable[[ModelRequest], str] | None = None  # given: writes each answer
    silence_s: float = 0.0  # before the first piece
    gap_s: float = 0.0  # before each piece
    name: str = "canned"
    requests: list[ModelRequest] = field(default_factory=list)

    def pieces_for(self, request: ModelRequest) -> list[str]:
        if self.pieces is not None:
            return list(self.pieces)
        if self.answer is not None:
            text = self.answer(request)
        elif self.texts:
            text = self.texts[min(len(self.requests) - 1, len(self.texts) - 1)]
        else:
            text = "]}"  # the empty answer after the prefilled `{"actions": [`
        return [text[i : i + self.chunk] for i in range(0, len(text), self.chunk)]

    async def stream(self, request: ModelRequest, usage: Usage) -> AsyncIterator[str]:
        self.requests.append(request)
        if self.silence_s:
            await asyncio.sleep(self.silence_s)
        for piece in self.pieces_for(request):
            await asyncio.sleep(self.gap_s)  # a zero gap still lets a cancel in
            usage.output_tokens += 1
            yield piece
