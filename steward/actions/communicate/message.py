"""`message`: talk to the user (its text streams into the chat)."""

from __future__ import annotations

from typing import Any

from steward.actions.base import ActionModel, ActionSpec, RunState, WireOp
from steward.actions.sanitize import to_text


class Message(ActionModel):
    """What the model writes for `message`: the words the user is shown in the chat."""

    text: str


def _text_field(key: str) -> Any:
    def sanitize(
        data: dict[str, Any], ctx: RunState, index: int, complete: bool
    ) -> dict[str, Any] | None:
        text = to_text(data.get(key))
        if text is None:
            return None if complete or key not in data else {**data, key: ""}
        return {**data, key: text}

    return sanitize


def _resolve_message(data: dict[str, Any], ctx: RunState) -> list[WireOp]:
    # Chat text travels as `Outcome.chat` (partial versions included), not as a wire verb.
    return []


def _chat_text(data: dict[str, Any]) -> str:
    return str(data.get("text", ""))


# Its system-prompt section (ActionSpec.guide); docs/PROMPT.md maps the kit's rules to it.
_MESSAGE = """Talk to the user; it is the only thing of yours they read.
- Close each piece of work with a short message: what you did, or why you could not.
- Do the work rather than offering to do it; do not end by asking whether they want more."""

MESSAGE = ActionSpec(
    "message",
    family="communicate",
    kind="talk",
    schema=Message,
    description="Send a message to the user.",
    guide=_MESSAGE,
    sanitize=_text_field("text"),
    resolve=_resolve_message,
    streams=True,
    chat=_chat_text,
)
