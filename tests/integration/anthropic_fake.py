"""The local Messages server answering every request with one fixed text (`FakeAnthropic`).

The server itself lives in `steward.bench.anthropic_server`; test models that read the request
plug into it as responders (`steward.bench.responders`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from steward.bench.anthropic_server import (
    IMAGE_SIGNATURES,
    MessagesServer,
    Reply,
    image_problem,
    split_text,
    sse,
)

__all__ = ["IMAGE_SIGNATURES", "FakeAnthropic", "MessagesServer", "image_problem", "sse"]


@dataclass
class FakeAnthropic(MessagesServer):
    """Answers `text`, streamed in pieces of `chunk` characters, unless given a responder."""

    responder: Any = None
    text: str = "hello"
    chunk: int = 7
    requests: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.responder is None:
            self.responder = self._fixed

    def _fixed(self, body: dict[str, Any]) -> Reply:
        return Reply(split_text(self.text, self.chunk))
