"""The local Messages server answering with one fixed text, or with what `respond` makes of
the request body (a model that reads its prompt): `FakeAnthropic`.

The server itself (scenarios, image checks, `refuse_prefill` / `refuse_temperature`) lives in
`steward_tools.rigs.anthropic_server`; test models that read the request plug into it as
responders (`steward_tools.rigs.responders`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from steward_tools.rigs.anthropic_server import (
    IMAGE_SIGNATURES,
    MessagesServer,
    Reply,
    image_problem,
    split_text,
    sse,
)

__all__ = [
    "IMAGE_SIGNATURES",
    "FakeAnthropic",
    "MessagesServer",
    "StartFake",
    "image_problem",
    "sse",
]


@dataclass
class FakeAnthropic(MessagesServer):
    """Streams `text` (or `respond(body)`) in pieces of `chunk` characters, unless given a
    responder."""

    responder: Any = None
    text: str = "hello"
    respond: Callable[[dict[str, Any]], str] | None = None
    chunk: int = 7
    requests: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.responder is None:
            self.responder = self._fixed

    def _fixed(self, body: dict[str, Any]) -> Reply:
        text = self.respond(body) if self.respond is not None else self.text
        return Reply(split_text(text, self.chunk))


# The `start_fake_anthropic` fixture (tests/conftest.py): starts a `FakeAnthropic(**fields)`.
StartFake = Callable[..., Awaitable[FakeAnthropic]]
