"""Time moved instead of waited for: a lease or a queued run in Postgres runs out at once,
and the event loop's timers fire when a test moves the loop's clock on.

A test that needs a lease to lapse or a run to expire moves that row's times into the past
(an injected clock for the one row) rather than taking a short TTL and sleeping past it: a
short TTL on a loaded machine lapses between two statements that meant to hold it. A unit
test of a debounce or a delay moves the loop's clock (`LoopClock`): "nothing happened
before the delay" and "it happened after" then hold however slow the machine is.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import asyncpg
import pytest

# How far one step of `LoopClock.advance` moves: timers due within a step fire in one batch.
STEP_S = 0.005


class LoopClock:
    """The running loop's clock, frozen and moved by hand (`advance`); `now` is what
    `loop.time()` returns, to hand to code that takes a clock. While it is in use nothing
    may await a timer directly (`asyncio.sleep(0.1)`, `wait_for` polling): it would wait
    for a time that only `advance` brings."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        loop = asyncio.get_running_loop()
        self._now = loop.time()
        monkeypatch.setattr(loop, "time", self.now)

    def now(self) -> float:
        return self._now

    async def advance(self, seconds: float) -> None:
        """Move on by `seconds` in small steps, letting the loop run what falls due at each
        (and what that wakes) before the next: timers fire in their order, as in real time."""
        end = self._now + seconds
        while self._now < end:
            self._now = min(end, self._now + STEP_S)
            for _ in range(5):
                await asyncio.sleep(0)

    async def until(self, cond: Callable[[], bool], within_s: float) -> None:
        """Move on until `cond()` holds; fail if it does not within `within_s` of loop time."""
        end = self._now + within_s
        while not cond():
            assert self._now < end, f"condition not met within {within_s}s of loop time"
            await self.advance(STEP_S)


async def lapse_leases(pool: asyncpg.Pool, rooms: list[str], by_s: float) -> None:
    """The leases of `rooms` look taken or renewed `by_s` seconds earlier than they were."""
    await pool.execute(
        "UPDATE room_leases SET acquired_at = acquired_at - make_interval(secs => $2),"
        " heartbeat_at = heartbeat_at - make_interval(secs => $2),"
        " expires_at = expires_at - make_interval(secs => $2)"
        " WHERE room_id = ANY($1::text[])",
        rooms,
        by_s,
    )


async def expire_queued(pool: asyncpg.Pool, session_ids: list[str]) -> None:
    """The queued runs `session_ids` reached their expiry a second ago."""
    await pool.execute(
        "UPDATE queued_runs SET expires_at = now() - interval '1 second'"
        " WHERE session_id = ANY($1::text[])",
        session_ids,
    )
