"""What a model provider gets and gives: a request in, text chunks and usage out."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from steward.canvas.coords import CoordinateSpace

# The assistant turn starts with this, so the model continues inside the actions array.
PREFILL = '{"actions": ['


@dataclass(frozen=True)
class CanvasFacts:
    """The canvas a request shows, as the steward holds it: page records (a snapshot of the
    map, taken when the request was built) and the request's coordinate space. The request
    path hands these over as they are; a model that reads hints rather than the prompt (the
    scripted one) works out what it sees from them, so a real model's requests never pay
    for that view."""

    shapes: Mapping[str, dict[str, Any]]
    coords: CoordinateSpace


@dataclass
class ModelRequest:
    """A prompt split for caching: `system` (static prefix) then `user` content blocks."""

    system: list[str]
    # {"type": "text", "text"} | {"type": "image", "media_type", "data": bytes}
    user: list[dict[str, Any]]
    # Facts the scripted model uses to act like a real one (the request, viewport, ...).
    hints: dict[str, Any] = field(default_factory=dict)
    prefill: str = PREFILL
    max_tokens: int = 8192


@dataclass
class Usage:
    """Token counts of one or more model calls: input, output, and prompt-cache reads and writes."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    def add(self, other: Usage) -> None:
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cache_read_tokens += other.cache_read_tokens
        self.cache_write_tokens += other.cache_write_tokens


class ModelError(Exception):
    """A model call failed; `retryable` says whether trying again could help."""

    def __init__(self, message: str, *, retryable: bool = False, started: bool = False) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.started = started  # some output had already streamed


class ModelProvider(Protocol):
    """What every model provider offers: a name and a stream of text chunks for a request."""

    name: str

    def stream(self, request: ModelRequest, usage: Usage) -> AsyncIterator[str]:
        """Text after the prefill, in chunks; adds token counts to `usage` as it learns them."""
        ...


def estimate_tokens(text: str) -> int:
    """About 4 characters per token: used where no tokenizer is at hand."""
    return max(1, (len(text) + 3) // 4)


# USD per million tokens: (input, output, cache read, cache write). Unknown models → default.
PRICES: dict[str, tuple[float, float, float, float]] = {
    "scripted": (0.0, 0.0, 0.0, 0.0),
    "replay": (0.0, 0.0, 0.0, 0.0),
    "claude-sonnet": (3.0, 15.0, 0.30, 3.75),
    "claude-opus": (15.0, 75.0, 1.50, 18.75),
    "claude-haiku": (0.80, 4.0, 0.08, 1.0),
}


def estimate_cost(model: str, usage: Usage) -> float:
    name = model.split(":", 1)[-1]
    price = next(
        (p for key, p in PRICES.items() if name.startswith(key) or model.startswith(key)),
        PRICES["claude-sonnet"],
    )
    return (
        usage.input_tokens * price[0]
        + usage.output_tokens * price[1]
        + usage.cache_read_tokens * price[2]
        + usage.cache_write_tokens * price[3]
    ) / 1_000_000
