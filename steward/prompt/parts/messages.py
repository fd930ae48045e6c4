"""The request itself, or the follow-up instruction of the request loop."""

from steward.prompt.base import Block, PromptPart, text
from steward.prompt.state import PromptState


def _build(state: PromptState) -> list[Block]:
    f = state.followup
    if f is None:
        if state.request_from != "user":  # a wake (a task done, a wait met): not a person's words
            return text(f"From the steward (not a user): {state.message}")
        return text(f"User request: {state.message}")
    lines = [f"Original request: {state.message}"]
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


_GUIDE = """The request comes last. When you are called again on your own (a review, more detail, a
new view, unfinished todos) it says why and repeats the original request. When the steward
wakes you (a task is done, what you waited for happened), the request says it comes from the
steward; the user's own words are in the history and the project."""

PART = PromptPart(
    "messages",
    100,
    False,
    _build,
    title="The request",
    guide=_GUIDE,
)
