"""The fairy's own tasks, or the task it works on and the area it is confined to."""

from steward.prompt.base import Block, PromptPart, text
from steward.prompt.state import PromptState


def _build(state: PromptState) -> list[Block]:
    f = state.fairy
    if f is None or not f.tasks:
        return []
    return text(*f.tasks)


_GUIDE = """Your own tasks, or the task you are working on now with its area. While you work a
task you see and edit only inside its area: shapes outside it are refused or moved inside. Draw
everything the task asks for inside the area, then mark the task done; never leave it waiting
for the user."""

PART = PromptPart(
    "tasks",
    9,
    False,
    _build,
    title="Your tasks",
    guide=_GUIDE,
)
