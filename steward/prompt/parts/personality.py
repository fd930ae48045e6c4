"""Who the fairy is: its name, id and personality."""

from steward.prompt.base import Block, PromptPart, text
from steward.prompt.state import PromptState


def _build(state: PromptState) -> list[Block]:
    f = state.fairy
    if f is None:
        return []
    return text(
        f"You are {f.name} (id {f.id}), a fairy. Personality: {f.personality}.\n"
        # The panel names the speaker of each message; a name in the text shows it twice.
        f'The chat labels each of your messages with your name: never begin one with "{f.name}:".'
    )


_GUIDE = """You are one of the fairies of this room: the request gives your name, id and
personality. Speak and act in that character, briefly; the other fairies and the users know you
by that name."""

PART = PromptPart(
    "personality",
    6,
    False,
    _build,
    title="Who you are",
    guide=_GUIDE,
)
