"""The request itself, or the follow-up instruction of the request loop."""

from steward.prompt.base import Block, PromptPart, text
from steward.prompt.state import PromptState

# How a person's words came, and where the `message` the agent writes will be read.
_CHANNELS: dict[str, tuple[str, str]] = {
    "panel": (
        "typed in the steward panel of their browser",
        "in the steward panel of everyone in the room, and in the room's text chat",
    ),
    "chat": (
        "sent in the room's text chat (LiveKit's lk.chat)",
        "in the room's text chat, and in the steward panel of everyone in the room",
    ),
    "voice": (
        "spoken aloud and transcribed, so a word may be misheard",
        "as text (it is not spoken): in the steward panels and the room's text chat",
    ),
    "http": (
        "posted over the steward's HTTP API, with no browser of theirs behind it",
        "in the run's HTTP result, and in the steward panels and the room's text chat",
    ),
}


def _asked(state: PromptState) -> list[str]:
    """Who asked, how their words came, and where the reply will be read (nothing when the
    runtime does not know)."""
    how = _CHANNELS.get(state.channel or "")
    asker = state.asked_by or state.asker
    if how is None:
        return [f"Asked by {asker}."] if asker else []
    who = f"Asked by {asker}, {how[0]}" if asker else f"This request was {how[0]}"
    return [f"{who}. Your message will be read {how[1]}."]


def _build(state: PromptState) -> list[Block]:
    f = state.followup
    if f is None:
        if state.request_from != "user":  # a wake (a task done, a wait met): not a person's words
            return text(f"From the steward (not a user): {state.message}")
        return text(*_asked(state), f"User request: {state.message}")
    lines = [*_asked(state), f"Original request: {state.message}"]
    if f.kind == "review":
        lines.append(
            f"You scheduled a review: {f.text}. Look at the result; fix problems or finish."
        )
    elif f.kind == "add-detail":
        lines.append(f"You planned more work: {f.text}. Continue.")
    elif f.kind == "view":
        lines.append(f"You moved your view: {f.text}. Continue from here.")
    elif f.kind == "todo":
        lines.append("Your todo list has unfinished items. Continue with them.")
    else:
        lines.append(f"Continue: {f.text}")
    return text(*lines)


_GUIDE = """The request comes last, with who asked, how their words came (typed, in the room's
chat, spoken, over HTTP) and where your message will be read. When you are called again on
your own (a review, more detail, a new view, unfinished todos) it says why and repeats the
original request. When the steward wakes you (a task is done, what you waited for happened),
the request says it comes from the steward; the user's own words are in the history and the
project."""

PART = PromptPart(
    "request_line",
    100,
    False,
    _build,
    title="The request",
    guide=_GUIDE,
)
