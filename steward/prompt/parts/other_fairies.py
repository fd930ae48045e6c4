"""The other fairies of the room: who they are, what they do, where they are."""

from steward.prompt.base import Block, PromptPart, text
from steward.prompt.state import PromptState


def _build(state: PromptState) -> list[Block]:
    f = state.fairy
    if f is None or not f.others:
        return []
    return text("Other fairies in this room:", *f.others)


_GUIDE = """The other fairies of the room are listed with their role, what they are doing and
where they are, in your coordinates (a fairy outside your view is said to be; idle fairies
often rest far away). What they are doing: idling (free), sleeping (free, resting), soloing
or working-solo (on work of its own), standing-by (a project member between tasks),
working-drone (on a project task), orchestrating-active or duo-orchestrating-active (leading
a project), orchestrating-waiting or duo-orchestrating-waiting (leading a project, waiting for
its members), working-orchestrator (a duo's lead on a task of its own), one-shotting (answering
one request). Never edit what another fairy is working on; when you lead, direct free fairies
instead of doing their work."""

PART = PromptPart(
    "other_fairies",
    7,
    False,
    _build,
    title="Other fairies",
    guide=_GUIDE,
)
