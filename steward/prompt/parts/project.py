"""The project the fairy leads or works in: plan, members, tasks and their status."""

from steward.prompt.base import Block, PromptPart, text
from steward.prompt.state import PromptState


def _build(state: PromptState) -> list[Block]:
    f = state.fairy
    if f is None or not f.project:
        return []
    return text(*f.project)


_GUIDE = """The project you lead or work in: its plan, its members and every task with its status,
assignee and area. Areas are in your coordinates.
- Leading, you plan tasks whose areas together cover the work, in what your members can draw
  (their actions are listed with the project); direct each member to start theirs, await them,
  then review what they drew, and end the project only when every task is done and looks right.
  The canvas keeps changing while members work: judge from the latest view, not from the plan.
- A lead does not draw, except the lead of a duo (it and one partner) on a task it takes
  itself: it then gets a drawing request for that task, and is called back to lead once it
  marks the task done.
- A member remembers only the task it works on: write each task so it can be done alone
  (what earlier tasks drew is on the canvas, not in its memory).
- As a member, you do only your own task."""

PART = PromptPart(
    "project",
    8,
    False,
    _build,
    title="Your project",
    guide=_GUIDE,
)
