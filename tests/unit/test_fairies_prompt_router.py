"""Which runner gets a prompt: the fairies or the one-shot canvas agent."""

from __future__ import annotations

import pytest

from steward.fairies.prompt_router import PromptRouter, for_fairies
from steward.ports import PromptInput, SessionPort
from steward_tools.memory_session import MemoryRoom, MemorySession


def _p(message: str, fairy: str | None = None) -> PromptInput:
    return PromptInput(message=message, source="browser", requester="u", fairy=fairy)


@pytest.mark.parametrize(
    ("message", "fairy", "routed"),
    [
        ("draw a cat", None, None),
        ("project: draw a farm", None, "draw a farm"),
        ("  Project :  draw a farm", None, "draw a farm"),
        ("project:", None, None),  # nothing to do: the one-shot agent answers
        ("projects are fun", None, None),
        ("draw a farm", "orchestrator", "draw a farm"),
        ("project: draw a farm", "fairy-2", "draw a farm"),
    ],
)
def test_routing_rule(message: str, fairy: str | None, routed: str | None) -> None:
    out = for_fairies(_p(message, fairy))
    assert (out.message if out else None) == routed
    if out is not None:
        assert out.fairy == fairy


class RecordingRunner:
    def __init__(self, name: str, seen: list[str]) -> None:
        self.name, self.seen = name, seen

    async def run(self, session: SessionPort, prompt: PromptInput) -> str:
        self.seen.append(f"{self.name}:{prompt.message}")
        return "done"


async def test_router_hands_prompts_to_the_chosen_runner() -> None:
    seen: list[str] = []
    router = PromptRouter(RecordingRunner("fairies", seen), RecordingRunner("one-shot", seen))
    session = MemorySession(MemoryRoom(), room_id="r", fairy="x")
    await router.run(session, _p("draw a cat"))
    await router.run(session, _p("project: draw a farm"))
    assert seen == ["one-shot:draw a cat", "fairies:draw a farm"]
