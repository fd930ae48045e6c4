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
# The same answer, long enough to stream for several seconds one character at a time.
LONG_ACTIONS = ACTIONS.replace("hello", "hello " * 60)


def paced(gap_s: float, silence_s: float = 0.0, text: str = ACTIONS) -> CannedModel:
    """Streams `text` one character per `gap_s`, after an optional silence."""
    return CannedModel(
        answer=lambda r: text[len(r.prefill) :] if text.startswith(r.prefill) else "",
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
    # ~410 chunks 12 ms apart: over 4.5 s in all (longer on a loaded machine), past the 3 s
    # idle limit, each gap a 250th of it. The limit is wide because a busy two-core machine
    # can stall the whole event loop for a second: the watchdog and the model's stream wait
    # in the same loop, so such a stall looks like a silent model.
    model = paced(gap_s=0.012, text=LONG_ACTIONS)
    outcome, _ = _run(model, idle_s=3.0, max_s=60)
    assert outcome == "done"


def test_a_silent_model_ends_with_the_watchdog() -> None:
    outcome, _ = _run(paced(gap_s=0.001, silence_s=5.0), idle_s=0.2, max_s=30)
    assert outcome == "error: watchdog"


def test_the_hard_cap_ends_a_run_that_never_stops_progressing() -> None:
    outcome, _ = _run(paced(gap_s=0.02), idle_s=1.0, max_s=0.3)
    assert outcome == "error: watchdog"


async def test_progress_pushes_the_deadline_but_never_past_the_cap() -> None:
    """Checked on the deadlines themselves (event loop time), not on how long it took: a
    loaded machine may run the loop late, never moves a deadline."""
    idle, cap = 0.05, 0.25
    dog = Watchdog(idle_s=idle, max_s=cap)
    loop = asyncio.get_running_loop()
    seen: list[float] = []
    with pytest.raises(TimeoutError):
        async with dog.guard():
            first = dog.deadline()
            assert first is not None
            hard = first - idle + cap  # the guard started at first - idle (within a few µs)
            while True:
                await asyncio.sleep(0.01)
                before = loop.time()
                dog.progress()
                deadline = dog.deadline()
                assert deadline is not None
                seen.append(deadline)
                assert deadline <= hard + 1e-3  # never past the cap
                assert deadline >= min(before + idle, hard) - 1e-3  # pushed a whole idle ahead
    assert dog.deadline() is None
    assert max(seen) > first + idle  # kept alive well past idle_s by progress
    assert seen[-1] == pytest.approx(hard, abs=1e-3)  # and it ended at the cap
    assert loop.time() >= hard - 1e-3
