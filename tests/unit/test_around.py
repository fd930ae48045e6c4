"""The image around a working fairy's task area never delays a request for long or fails it."""

from __future__ import annotations

import asyncio

import pytest

from steward.fairies.around import with_around
from steward.ports import CanvasSnapshot, Picture
from steward.protocol.box import Box
from steward_tools.memory_session import MemoryRoom, MemorySession
from tests.support.context_rigs import WEBP, FetchRig

AREA = Box(400, 0, 300, 300)
PIC = Picture(Box(x=175, y=-225, w=750, h=750), b"img", "image/webp")


class _Slow(MemorySession):
    async def request_picture(self, *, bounds: Box, max_size: int) -> Picture | None:
        await asyncio.sleep(30)
        return PIC


class _Broken(MemorySession):
    async def request_picture(self, *, bounds: Box, max_size: int) -> Picture | None:
        raise RuntimeError("the browser left")


async def _context(session: MemorySession) -> CanvasSnapshot:
    return await session.request_context(bounds=Box(x=400, y=0, w=300, h=300))


async def test_the_picture_of_the_area_around_the_task_rides_along() -> None:
    session = MemorySession(MemoryRoom(picture=PIC))
    ctx = await with_around(session, AREA, _context(session))
    assert ctx.around == PIC
    # It asked for the grown area around the task, small.
    assert session.room.picture_requests == [(Box(x=175, y=-225, w=750, h=750), 512)]


async def test_a_late_or_failed_picture_leaves_the_request_as_it_was() -> None:
    slow = _Slow()
    async with asyncio.timeout(5):
        ctx = await with_around(slow, AREA, _context(slow), grace_s=0.05)
    assert ctx.around is None and ctx.viewport == slow.room.viewport
    broken = _Broken()
    ctx = await with_around(broken, AREA, _context(broken))
    assert ctx.around is None
    # No task area: no picture is asked for.
    plain = MemorySession(MemoryRoom(picture=PIC))
    ctx = await with_around(plain, None, _context(plain))
    assert ctx.around is None and plain.room.picture_requests == []


async def test_a_failed_context_cancels_the_picture() -> None:
    slow = _Slow()

    async def failing() -> CanvasSnapshot:
        raise RuntimeError("no context")

    tasks_before = len(asyncio.all_tasks())
    with pytest.raises(RuntimeError):
        async with asyncio.timeout(5):
            await with_around(slow, AREA, failing())
    await asyncio.sleep(0)  # the cancelled fetch unwinds
    assert len(asyncio.all_tasks()) == tasks_before


async def test_the_fetcher_asks_a_browser_for_a_small_image_only_and_keeps_no_copy() -> None:
    rig = FetchRig()
    area = Box(x=175, y=-225, w=750, h=750)
    async with asyncio.timeout(5):
        pic = await rig.fetcher.picture(area, 400)
    assert pic == Picture(area, WEBP, "image/webp")
    (call,) = rig.host.calls
    assert call["maxSize"] == 400 and call["bounds"] == area.to_dict()
    assert sorted(call["want"]) == ["screenshot", "viewport"]  # no shapes, no selection
    assert rig.fetcher.cache.lookup(area, True, None) is None  # a picture is never cached
    rig.host.fail = True
    for _ in range(4):
        async with asyncio.timeout(5):
            assert await rig.fetcher.picture(area, 400) is None  # failed: None, never raises
    # A missing picture is not a failed context: the host keeps its role.
    assert "alice" not in rig.participants.demoted()
