"""A prompt part: a name, a priority, whether it is static (cacheable), a builder, and the
system-prompt section (title, guide) that teaches the model to read it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from steward.prompt.state import PromptState

# {"type": "text", "text"} or {"type": "image", "media_type": "image/webp", "data": bytes}
Block = dict[str, Any]


@dataclass(frozen=True)
class PromptPart:
    """One part of the prompt: its name, order, whether it is cached, its builder and its
    system-prompt section."""

    name: str
    priority: int  # lower comes first; static parts always precede dynamic ones
    static: bool
    build: Callable[[PromptState], list[Block]]
    # Its section of the system prompt: what this part shows and how to use it.
    title: str = ""
    guide: str = ""


def text(*lines: str) -> list[Block]:
    body = "\n".join(line for line in lines if line)
    return [{"type": "text", "text": body}] if body else []
