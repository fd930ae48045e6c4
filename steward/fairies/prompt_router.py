"""Which runner handles a prompt: the room's fairies or the one-shot facade.

The rule (also in docs/FAIRIES.md):
- a prompt that picks fairies (`PromptRequest.fairies`) goes to them: one works it solo, two
  as a duo, three or more as a project the first one leads (`directing.py`);
- a prompt that names a fairy (`PromptRequest.fairy`) goes to the fairies: a fairy id of the
  room's roster reaches that fairy; any other name (`"orchestrator"`, `"lead"`, …) reaches
  the room's lead, which starts a project;
- a message that starts with `project:` goes to the room's lead, without the prefix; spoken,
  `project` needs no colon ("steward, project draw a farm");
- everything else is a one-shot request for the one-shot facade, which answers it as the
  asker's one-shotting fairy on the same fairy runtime (`one_shot.py`).
"""

from __future__ import annotations

import re
from dataclasses import replace

from steward.ports import AgentRunner, PromptInput, SessionPort

_PROJECT = re.compile(r"^\s*project\s*:\s*", re.IGNORECASE)
# Speech has no colons: a spoken request that starts with the word is a project too.
_SPOKEN_PROJECT = re.compile(r"^\s*project\b[\s,:.;-]*", re.IGNORECASE)


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

    def __init__(self, fairies: AgentRunner, one_shot: AgentRunner) -> None:
        self.fairies = fairies
        self.one_shot = one_shot

    async def run(self, session: SessionPort, prompt: PromptInput) -> str:
        routed = for_fairies(prompt)
        if routed is not None:
            return await self.fairies.run(session, routed)
        return await self.one_shot.run(session, prompt)
