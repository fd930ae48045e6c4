"""`StageHooks`: listeners hear the stages they chose, once each, and never break the work."""

from __future__ import annotations

import asyncio

import pytest

from steward.obs.stage_hooks import Stage, StageEvent, StageHooks


async def _answer(value: str) -> str:
    await asyncio.sleep(0)
    return value


async def test_timed_reports_start_result_and_detail_once_per_listener() -> None:
    hooks = StageHooks()
    heard: list[StageEvent] = []
    hooks.listen(Stage.PROMPT_STARTED, heard.append)
    hooks.listen(Stage.PROMPT_STARTED, heard.append)  # the same callable: added once
    assert await hooks.timed(Stage.PROMPT_STARTED, _answer("s-1"), room="r") == "s-1"
    [event] = heard
    assert (event.stage, event.result, dict(event.detail)) == (
        Stage.PROMPT_STARTED,
        "s-1",
        {"room": "r"},
    )
    assert event.started is not None and event.started <= event.at


async def test_no_listener_hands_the_work_back_and_stop_ends_listening() -> None:
    hooks = StageHooks()
    work = _answer("x")
    assert hooks.timed(Stage.OUTBOX_APPEND, work) is work
    await work
    heard: list[StageEvent] = []
    stop = hooks.listen(Stage.OUTBOX_APPEND, heard.append)
    hooks.report(Stage.PUBLISH_ISSUED)  # another stage
    stop()
    hooks.report(Stage.OUTBOX_APPEND)
    assert heard == [] and not hooks.listening(Stage.OUTBOX_APPEND)


async def test_a_failing_work_is_reported_and_a_failing_listener_is_contained() -> None:
    hooks = StageHooks()
    heard: list[StageEvent] = []

    def broken(_event: StageEvent) -> None:
        raise ValueError("listener bug")

    hooks.listen(Stage.CONTEXT_RPC_REPLY, broken)
    hooks.listen(Stage.CONTEXT_RPC_REPLY, heard.append)

    async def fails() -> str:
        raise RuntimeError("rpc down")

    with pytest.raises(RuntimeError, match="rpc down"):
        await hooks.timed(Stage.CONTEXT_RPC_REPLY, fails())
    assert [e.result for e in heard] == [None]
    hooks.report(Stage.CONTEXT_RPC_REPLY, request_id="q")
    assert heard[-1].detail == {"request_id": "q"}
