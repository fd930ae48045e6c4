"""The project the fairy leads or works in: plan, members, tasks and their status."""

from steward.prompt.base import Block, PromptPart, text
from steward.prompt.state import PromptState


def _build(state: PromptState) -> list[Block]:
    f = state.fairy
    if f is None or not f.project:
        return []
    return text(*f.project)


_GUIDE = """The project you lead or work in: its plan, its members and every task with its status,
assignee and area. Areas are in your coordinates. A leader plans tasks with areas side by side
that together cover the work, directs each member to start theirs, awaits them, then reviews
what they drew and ends the project only when every task is done and looks right; a member
does only its own task."""

PART = PromptPart(
    "project",
    8,
    False,
    _build,
    title="Your project",
    guide=_GUIDE,
)
