"""The run watchdog: a slow run that keeps producing output finishes; a silent one ends."""

from __future__ import annotations

import asyncio

import pytest

from steward.config import Settings
from steward.fairies.one_shot_runner import OneShotConfig, OneShotRunner
from steward.ports import PromptInput
from steward.watchdog import Watchdog
from steward_tools.canned_model import CannedModel
from steward_tools.memory_session import MemorySession

ACTIONS = '{"actions": [{"_type": "message", "text": "hello"}]}'


def paced(gap_s: float, silence_s: float = 0.0) -> CannedModel:
    """Streams ACTIONS one character per `gap_s`, after an optional silence."""
    return CannedModel(
        answer=lambda r: ACTIONS[len(r.prefill) :] if ACTIONS.startswith(r.prefill) else "",
        chunk=1,
        gap_s=gap_s,
        silence_s=silence_s,
    )


def _run(model: CannedModel, *, idle_s: float, max_s: float) -> tuple[str, MemorySession]:
    settings = Settings(
        steward_max_followups=0, steward_watchdog_s=idle_s, steward_session_max_s=max_s
    )
    agent = OneShotRunner(OneShotConfig(settings=settings, model=model))  # type: ignore[arg-type]
    session = MemorySession()
    prompt = PromptInput(message="hi", source="system", requester="test")
    return asyncio.run(agent.run(session, prompt)), session


def test_a_run_slower_than_the_idle_limit_but_progressing_finishes() -> None:
    # ~50 chunks: ~2 s in all, over twice the idle limit, each gap a twentieth of it (a
    # loaded machine stalls a loop for a tenth of a second now and then: not a stalled run).
    model = paced(gap_s=0.04)
    outcome, _ = _run(model, idle_s=0.8, max_s=30)
    assert outcome == "done"


def test_a_silent_model_ends_with_the_watchdog() -> None:
    outcome, _ = _run(paced(gap_s=0.001, silence_s=5.0), idle_s=0.2, max_s=30)
    assert outcome == "error: watchdog"


def test_the_hard_cap_ends_a_run_that_never_stops_progressing() -> None:
    outcome, _ = _run(paced(gap_s=0.02), idle_s=1.0, max_s=0.3)
    assert outcome == "error: watchdog"


async def test_progress_pushes_the_deadline_but_never_past_the_cap() -> None:
    dog = Watchdog(idle_s=0.05, max_s=0.25)
    loop = asyncio.get_running_loop()
    started = loop.time()
    with pytest.raises(TimeoutError):
        async with dog.guard():
            while True:
                await asyncio.sleep(0.01)
                dog.progress()
    elapsed = loop.time() - started
    assert elapsed >= 0.25  # kept alive well past idle_s by progress, up to the cap
    assert elapsed < 0.25 + 0.5  # and ended there (slack for a loaded machine)
