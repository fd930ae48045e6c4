"""AbuseGuard: strikes within a minute mute; a mute outlives the connection for `mute_s`."""

from __future__ import annotations

import asyncio

from steward.room.inbound.abuse import STREAM_STRIKE, AbuseGuard


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def _guard(clock: Clock, revoked: list[str]) -> AbuseGuard:
    async def revoke(identity: str) -> None:
        revoked.append(identity)

    return AbuseGuard("r", revoke, limit_per_min=5, mute_s=600.0, clock=clock)


async def test_strikes_over_the_limit_in_a_minute_mute_once() -> None:
    clock, revoked = Clock(), []
    guard = await _guard(clock, revoked)
    for _ in range(5):
        guard.strike("eve", "bad_ack")
    assert "eve" not in guard.muted
    clock.now += 61  # the first five are out of the window
    for _ in range(5):
        guard.strike("eve", "bad_ack")
    assert "eve" not in guard.muted
    guard.strike("eve", "unexpected_stream", weight=STREAM_STRIKE)  # weighs STREAM_STRIKE
    assert STREAM_STRIKE > 5 and "eve" in guard.muted
    guard.strike("eve", "bad_ack")
    await asyncio.sleep(0)
    assert revoked == ["eve"]


async def test_a_muted_identity_that_rejoins_is_muted_again_until_the_mute_runs_out() -> None:
    clock, revoked = Clock(), []
    guard = await _guard(clock, revoked)
    guard.strike("eve", "unexpected_stream", weight=STREAM_STRIKE)
    guard.forget("eve")  # left the room
    assert "eve" not in guard.muted
    clock.now += 300
    guard.rejoined("eve")
    guard.rejoined("ann")  # never muted: untouched
    await asyncio.sleep(0)
    assert "eve" in guard.muted and "ann" not in guard.muted
    assert revoked == ["eve", "eve"]
    guard.forget("eve")
    clock.now += 301  # 601 s after the mute
    guard.rejoined("eve")
    await asyncio.sleep(0)
    assert "eve" not in guard.muted and revoked == ["eve", "eve"]
