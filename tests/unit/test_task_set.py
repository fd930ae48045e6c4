"""TaskSet: keeps tasks until done, logs failures, cancels and awaits on close."""

from __future__ import annotations

import asyncio

import structlog

from steward.task_set import TaskSet


async def test_a_finished_task_is_dropped_and_its_result_kept() -> None:
    tasks = TaskSet()

    async def answer() -> int:
        return 42

    task = tasks.spawn(answer())
    assert len(tasks) == 1
    assert await task == 42
    await asyncio.sleep(0)  # done callbacks run on the next loop pass
    assert len(tasks) == 0


async def test_a_failure_is_logged_under_the_owners_event_and_context() -> None:
    tasks = TaskSet("room_task_failed", room="r1")

    async def boom() -> None:
        raise RuntimeError("broken pipe")

    with structlog.testing.capture_logs() as logs:
        tasks.spawn(boom())
        await tasks.wait()
        await asyncio.sleep(0)
    failures = [e for e in logs if e["event"] == "room_task_failed"]
    assert len(failures) == 1
    assert failures[0]["room"] == "r1"
    assert "broken pipe" in failures[0]["error"]
    assert len(tasks) == 0


async def test_a_cancelled_task_is_not_a_failure() -> None:
    tasks = TaskSet("room_task_failed")
    with structlog.testing.capture_logs() as logs:
        task = tasks.spawn(asyncio.sleep(60))
        await asyncio.sleep(0)
        tasks.cancel()
        await tasks.wait()
        await asyncio.sleep(0)
    assert task.cancelled()
    assert logs == []


async def test_close_cancels_and_awaits_every_running_task() -> None:
    tasks = TaskSet()
    ended: list[str] = []

    async def slow(name: str) -> None:
        try:
            await asyncio.sleep(60)
        finally:
            ended.append(name)

    for name in ("a", "b", "c"):
        tasks.spawn(slow(name))
    await asyncio.sleep(0)
    await tasks.close()
    assert sorted(ended) == ["a", "b", "c"]
    await asyncio.sleep(0)
    assert len(tasks) == 0


async def test_wait_returns_when_running_tasks_end_and_at_once_when_empty() -> None:
    tasks = TaskSet()
    await asyncio.wait_for(tasks.wait(), 1)
    gate = asyncio.Event()
    finished: list[bool] = []

    async def after_gate() -> None:
        await gate.wait()
        finished.append(True)

    tasks.spawn(after_gate())
    waiter = asyncio.ensure_future(tasks.wait())
    await asyncio.sleep(0.01)
    assert not waiter.done()
    gate.set()
    await asyncio.wait_for(waiter, 1)
    assert finished == [True]
