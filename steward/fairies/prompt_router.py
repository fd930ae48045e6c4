"""Which runner handles a prompt: the room's fairies or the one-shot facade.

The rule (also in docs/FAIRIES.md):
- a prompt that picks fairies (`PromptRequest.fairies`) goes to them: one works it solo, two
  as a duo, three or more as a project the first one leads (`directing.py`);
- a prompt that names a fairy (`PromptRequest.fairy`) goes to the fairies: a fairy id of the
  room's roster reaches that fairy; any other name (`"orchestrator"`, `"lead"`, …) reaches
  the room's lead, which starts a project;
- a message that starts with `project:` goes to the room's lead, without the prefix; spoken,
  `project` needs no colon ("steward, project draw a farm");
- spoken, fairies are picked by name: "steward, Clover and Fennel, draw a garden" picks them
  in that order (`spoken_pick`);
- everything else is a one-shot request for the one-shot facade, which answers it as the
  asker's one-shotting fairy on the same fairy runtime (`one_shot.py`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import replace

from steward.ports import AgentRunner, PromptInput, SessionPort

_PROJECT = re.compile(r"^\s*project\s*:\s*", re.IGNORECASE)
# Speech has no colons: a spoken request that starts with the word is a project too.
_SPOKEN_PROJECT = re.compile(r"^\s*project\b[\s,:.;-]*", re.IGNORECASE)


# Room id → its fairies by name (lower case) → fairy id.
NameLookup = Callable[[str], Mapping[str, str]]
_WORD = re.compile(r"\s*([^\W\d_][\w'-]*)")
_AND = re.compile(r"\s*(?:,|\band\b)\s*", re.IGNORECASE)
_REST = re.compile(r"^[\s,:;.-]*")


def spoken_pick(message: str, names: Mapping[str, str]) -> tuple[tuple[str, ...], str] | None:
    """The fairies a spoken request names first, in order, and the request after them
    ("Clover and Fennel, draw a garden" → their ids, "draw a garden"); None when it does not
    start with a fairy's name or nothing follows."""
    picked: list[str] = []
    at, after_and = 0, False
    while (word := _WORD.match(message, at)) is not None:
        name = word.group(1).lower()
        fairy = names.get(name)
        if fairy is None and not after_and:
            break
        # After "and", a name the room does not have stays in the pick: the runtime refuses
        # it and says so, rather than drawing for fewer fairies than were named.
        picked.append(fairy or name)
        at = word.end()
        joined = _AND.match(message, at)
        if joined is None:
            break
        at, after_and = joined.end(), "and" in joined.group(0).lower()
    rest = _REST.sub("", message[at:], count=1).strip()
    if not picked or not rest:
        return None
    return tuple(dict.fromkeys(picked)), rest


def for_fairies(prompt: PromptInput) -> PromptInput | None:
    """The prompt as the fairies should see it, or None when it is a one-shot request."""
    grammar = _SPOKEN_PROJECT if prompt.source == "voice" else _PROJECT
    match = grammar.match(prompt.message)
    if match is not None and prompt.message[match.end() :].strip():
        return replace(prompt, message=prompt.message[match.end() :].strip())
    if prompt.fairy or prompt.fairies:
        return prompt
    return None


class PromptRouter:
    """An `AgentRunner` that hands each prompt to the runner the rule above picks."""

    def __init__(
        self, fairies: AgentRunner, one_shot: AgentRunner, names: NameLookup | None = None
    ) -> None:
        self.fairies = fairies
        self.one_shot = one_shot
        self.names = names  # the rooms' fairies by name, for spoken picks

    async def run(self, session: SessionPort, prompt: PromptInput) -> str:
        if prompt.source == "voice" and not prompt.fairies and self.names is not None:
            spoken = spoken_pick(prompt.message, self.names(session.room_id))
            if spoken is not None:
                prompt = replace(prompt, fairies=spoken[0], message=spoken[1])
        routed = for_fairies(prompt)
        if routed is not None:
            return await self.fairies.run(session, routed)
        return await self.one_shot.run(session, prompt)
