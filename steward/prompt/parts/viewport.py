"""The bounds of the area the request shows, named for what it is (the user's view, the
agent's own, a review area, a task area), the user's view when it is another, and whose
view the agent sees when it is not the asker's; in the model's coordinates. It comes before
the image, whose caption refers to it."""

import json

from steward.prompt.base import Block, PromptPart, text
from steward.prompt.state import PromptState, ViewKind

# What the image and the shape lists of a request show, by the kind of its view. The view a
# person's screen shows has one name whoever's browser reported it (the asker's, or with no
# asker behind the run the room's last): the same box never reads as two things.
USERS_VIEW = "the user's view"
VIEW_WORDS: dict[ViewKind, str] = {
    "asker": USERS_VIEW,
    "own": "your own view, where you moved it",
    "review": "the area you asked to review",
    "task": "your task area",
    "project": "the area of the project you lead: all its task areas",
    "room": USERS_VIEW,
}


def _build(state: PromptState) -> list[Block]:
    view = state.coords.box_to_model("viewport", state.viewport.to_dict())
    lines = [f"Your viewport ({VIEW_WORDS[state.view_kind]}): {json.dumps(view)}"]
    if state.user_viewport is not None and state.user_viewport != state.viewport:
        user = state.coords.box_to_model("user-viewport", state.user_viewport.to_dict())
        lines.append(f"The user's view (not the area shown): {json.dumps(user)}")
    if state.view_note:
        lines.append(f"Whose view this is: {state.view_note}")
    return text(*lines)


_GUIDE = """The bounds of your viewport (the area the image and the shape lists show) come first,
named for what they are. "The user's view" is the part of the canvas a person's screen shows:
the asker's, or, when no one is asking just now, the one a browser in the room last reported (a
line says so when it is not the asker's). When your viewport is another area, the user's view is
given too.
- Put your work where the user asked for it ("to the right of the chart"), in free space: never on
  top of shapes that are there unless asked. When they name no place, work inside your viewport.
- Placing work outside the user's view is fine when asked or when there is no room inside it:
  then say in your message where it is ("below the chart"), so they can find it.
- On an empty canvas, centre your work in the viewport and make the whole of it about 80% as
  tall as the viewport; take more room if the work needs it."""

PART = PromptPart(
    "viewport",
    20,
    False,
    _build,
    title="Viewport",
    guide=_GUIDE,
)
