"""`lk.agent.state`: derived from the room's runs and what it hears, debounced, one writer."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import pytest

from steward.room.outbound import agent_state
from steward.room.outbound.agent_state import AgentState
from tests.conftest import wait_for
from tests.support.clock import LoopClock


class Attributes:
    """A participant's attributes as `set_attributes` leaves them; fails on demand."""

    def __init__(self) -> None:
        self.calls: list[dict[str, str]] = []
        self.fail = 0
        self.applied_then_fail = 0  # applied, but the confirmation never comes (a timeout)
        self.hang = 0  # calls that never return (a lost confirmation, the SDK waiting on)
        self.shown: str | None = None  # what the room's other participants see

    async def set(self, attrs: dict[str, str]) -> None:
        if self.fail:
            self.fail -= 1
            raise RuntimeError("no permission")
        self.shown = attrs["lk.agent.state"]
        if self.hang:
            self.hang -= 1
            await asyncio.Event().wait()
        if self.applied_then_fail:
            self.applied_then_fail -= 1
            raise TimeoutError
        self.calls.append(dict(attrs))


def new_state(
    attrs: Attributes, clock: Callable[[], float] = time.monotonic, **kw: float
) -> AgentState:
    timing = {"rise_s": 0.02, "fall_s": 0.15, "listen_hold_s": 0.3} | kw
    return AgentState("r1", attrs.set, clock=clock, **timing)


async def test_idle_then_thinking_while_a_run_works_then_idle(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = LoopClock(monkeypatch)
    attrs = Attributes()
    state = new_state(attrs, clock.now)
    state.start()
    try:
        await clock.until(lambda: state.published == "idle", 1.0)
        assert attrs.calls == [{"lk.agent.state": "idle"}]
        for status in ("waiting_context", "calling_model", "streaming", "streaming"):
            state.session_status("s1", status)
            await clock.advance(0.01)
        await clock.until(lambda: state.published == "thinking", 1.0)
        state.session_status("s1", "done")
        await clock.advance(state.fall_s * 0.9)
        assert state.published == "thinking"  # a fall waits out fall_s
        await clock.advance(state.fall_s * 0.2)
        assert state.published == "idle"
        assert state.history == ["idle", "thinking", "idle"]
    finally:
        await state.close()


async def test_back_to_back_runs_and_their_phases_never_flap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = LoopClock(monkeypatch)
    attrs = Attributes()
    state = new_state(attrs, clock.now)
    state.start()
    try:
        state.session_status("run0", "calling_model")
        await clock.until(lambda: state.published == "thinking", 1.0)
        for i in range(10):  # each run ends, and the next starts within fall_s
            state.session_status(f"run{i}", "streaming")
            await clock.advance(0.02)
            state.session_status(f"run{i}", "done")
            await clock.advance(0.05)
            state.session_status(f"run{i + 1}", "waiting_context")
        assert state.history == ["thinking"]
        state.session_status("run10", "done")
        await clock.until(lambda: state.published == "idle", 1.0)
        assert state.history == ["thinking", "idle"]
    finally:
        await state.close()


async def test_a_run_shorter_than_the_rise_never_shows(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = LoopClock(monkeypatch)
    attrs = Attributes()
    state = new_state(attrs, clock.now, rise_s=0.1)
    state.start()
    try:
        await clock.until(lambda: state.published == "idle", 1.0)
        state.session_status("s1", "waiting_context")
        await clock.advance(0.02)
        state.session_status("s1", "error")
        await clock.advance(0.25)  # past the rise it would have waited out
        assert state.history == ["idle"]
    finally:
        await state.close()


async def test_listening_while_addressed_then_idle_and_thinking_wins() -> None:
    attrs = Attributes()
    state = new_state(attrs)
    state.start()
    try:
        await wait_for(lambda: state.published == "idle")
        state.heard()
        await wait_for(lambda: state.published == "listening")
        # The window closed.
        await wait_for(lambda: state.published == "idle", timeout=2.0, step=0.005)
        state.heard()
        state.session_status("s1", "calling_model")
        await wait_for(lambda: state.published == "thinking")
        state.session_status("s1", "done")  # what was heard became the run: no listening after
        await wait_for(lambda: state.published == "idle")
        state.heard()
        await wait_for(lambda: state.published == "listening")
        state.session_status("s2", "calling_model")
        state.heard()  # heard during a run: still thinking, then listening once it ends
        await wait_for(lambda: state.published == "thinking")
        state.session_status("s2", "done")
        await wait_for(lambda: state.published == "listening")
        assert state.history == [
            "idle",
            "listening",
            "idle",
            "thinking",
            "idle",
            "listening",
            "thinking",
            "listening",
        ]
    finally:
        await state.close()


async def test_scheduled_runs_do_not_work_and_failures_are_retried_not_raised(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(agent_state, "RETRY_S", 0.05)
    attrs = Attributes()
    attrs.fail = 2
    state = new_state(attrs)
    state.session_status("fairy", "scheduled")
    assert state.wanted() == "idle"
    state.start()
    try:
        await wait_for(lambda: state.published == "idle")
        assert attrs.calls == [{"lk.agent.state": "idle"}]  # after two refusals
    finally:
        await state.close()


async def test_a_set_applied_but_unconfirmed_is_sent_again_once_the_run_ends(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`thinking` reached the room but its confirmation timed out, and the run ended before
    the retry: the steward sends `idle` although `idle` was the last state confirmed, so the
    room is not left showing `thinking`."""
    monkeypatch.setattr(agent_state, "RETRY_S", 0.05)
    clock = LoopClock(monkeypatch)
    attrs = Attributes()
    state = new_state(attrs, clock.now)
    state.start()
    try:
        await clock.until(lambda: state.published == "idle", 1.0)
        attrs.applied_then_fail = 1
        state.session_status("s1", "streaming")
        await clock.until(lambda: attrs.shown == "thinking", 1.0)
        assert state.published is None  # unconfirmed: unknown
        state.session_status("s1", "done")
        await clock.until(lambda: state.published == "idle", 2.0)
        assert attrs.shown == "idle"
        assert [c["lk.agent.state"] for c in attrs.calls] == ["idle", "idle"]
    finally:
        await state.close()


async def test_a_set_that_never_returns_does_not_hide_the_next_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The room's first set hangs (its confirmation lost); a run of three seconds starts
    soon after: `thinking` still reaches the room while it works, not after."""
    clock = LoopClock(monkeypatch)
    attrs = Attributes()
    attrs.hang = 1
    state = AgentState("r1", attrs.set, clock=clock.now)  # the production timings
    state.start()
    try:
        await clock.advance(0.2)
        assert attrs.shown == "idle" and state.published is None  # sent, never confirmed
        state.session_status("s1", "streaming")
        await clock.until(lambda: attrs.shown == "thinking", 2.0)
        assert "s1" in state.runs  # while the run works
        state.session_status("s1", "done")
        await clock.until(lambda: state.published == "idle", 3.0)
        assert [c["lk.agent.state"] for c in attrs.calls][-2:] == ["thinking", "idle"]
    finally:
        await state.close()


def test_runs_are_bounded_and_stale_ones_do_not_count() -> None:
    now = [0.0]
    state = AgentState("r1", Attributes().set, clock=lambda: now[0])
    for i in range(agent_state.MAX_TRACKED + 50):
        state.session_status(f"s{i}", "streaming")
    assert len(state.runs) == agent_state.MAX_TRACKED
    assert "s0" not in state.runs and state.runs[0] == "s50"  # the oldest went first
    assert state.wanted() == "thinking"
    now[0] = agent_state.STALE_S + 1  # their final statuses were lost
    assert state.wanted() == "idle"
