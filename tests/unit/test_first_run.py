"""The first-run table (tests/support/first_run.py) through the one-shot agent and the scripted
model, over an in-memory session: every sentence's canvas outcome, in two different viewports."""

from __future__ import annotations

import copy

import pytest

from steward.canvas.bounds import shape_bounds
from steward.canvas.quality import quality_report
from steward.canvas.simple import model_type
from steward.config import Settings
from steward.fairies.one_shot_runner import OneShotConfig, OneShotRunner
from steward.ports import PromptInput
from steward.protocol.box import Box, union
from steward_tools.memory_session import MemoryRoom, MemorySession
from tests.support.first_run import CASES, Case

VIEWPORTS = {"wide": Box(x=0, y=0, w=1600, h=900), "small": Box(x=3000, y=-400, w=900, h=700)}


async def _say(agent: OneShotRunner, session: MemorySession, text: str) -> list[str]:
    before = len(session.chats)
    outcome = await agent.run(
        session, PromptInput(message=text, source="browser", requester="alice")
    )
    assert outcome == "done"
    return [t for role, t, partial in session.chats[before:] if not partial and role != "system"]


@pytest.mark.parametrize("view", sorted(VIEWPORTS))
@pytest.mark.parametrize("case", CASES, ids=[f"{i}:{c.sentence[:30]}" for i, c in enumerate(CASES)])
async def test_sentence(case: Case, view: str) -> None:
    session = MemorySession(MemoryRoom(viewport=VIEWPORTS[view]))
    agent = OneShotRunner(
        OneShotConfig(settings=Settings(steward_model="scripted"), tokens_per_s=0)
    )
    for text in case.before:
        await _say(agent, session, text)
    if case.select:
        session.room.selection = [
            i for i, s in session.browser.shapes.items() if model_type(s) == case.select
        ][:1]
    before = copy.deepcopy(session.browser.shapes)
    chats = await _say(agent, session, case.sentence)
    after = copy.deepcopy(session.browser.shapes)
    case.verify(before, after, chats)
    added = [i for i in after if i not in before]
    report = quality_report(after, touched=added, viewport=VIEWPORTS[view])
    box = union(shape_bounds(after[i], after) for i in added)
    if box is not None and report.outside_viewport:
        # Only when the viewport had no room: then the agent's view moves to show it (its
        # follow-up request looks there).
        looked = [b for b in session.context_requests if b is not None]
        assert any(v.contains(box) for v in looked), (box, looked)
    problems = report.problems()
    problems.pop("outside_viewport", None)
    assert problems == {}, report
