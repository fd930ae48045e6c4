"""The steward's `lk.agent.state` participant attribute, the one LiveKit's frontends and
components read an agent's state from (`useVoiceAssistant`, the agents playground).

`thinking` while any run of the room works, `listening` while a speaker who addresses the
steward is being heard (until a run starts: what it heard became the prompt), else `idle`
(the steward does not speak, so never `speaking`). It is derived from the statuses every
run announces (prompted and the fairies' own alike) and from what the voice intake
hears, and set by this one owner, on its own task:

- a rise (idle → listening → thinking) goes out after `rise_s` of the same wish, a fall only
  once the lower state has held `fall_s`: back-to-back runs, a run's phases and each action it
  draws never make it flap;
- one `set_attributes` at a time, each bounded by `SET_TIMEOUT_S`; a failure is logged, never
  raised, and tried again after `RETRY_S`, or at once when the wish changed meanwhile. The
  bound is short: a set is confirmed within milliseconds, but a confirmation can be lost (the
  room's first set, sent as the steward joins, has waited out a 5 s bound under load), and
  while one set waits no newer state goes out: a run shorter than the bound never showed
  `thinking`. A set that timed out may still have reached the room, so after a failure the
  room's state counts as unknown and whatever is wanted then is sent, even the state last
  confirmed: a `thinking` applied but unconfirmed is never left standing once the run ends;
- runs are remembered by id, at most `MAX_TRACKED`, and one silent for `STALE_S` (its final
  status lost) no longer counts as working.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import Literal

from steward.obs.logging import get_logger
from steward.obs.sampled_log import SampledLog
from steward.protocol.messages import FINAL_STATUSES
from steward.protocol.names import ATTR_AGENT_STATE

log = get_logger(__name__)

AgentStateName = Literal["idle", "listening", "thinking"]
_RANK: dict[str | None, int] = {None: -1, "idle": 0, "listening": 1, "thinking": 2}
# Statuses of a run that is not working now: ended, or waiting for its scheduled time.
_NOT_WORKING = FINAL_STATUSES | {"scheduled"}

RISE_S = 0.15
FALL_S = 1.0
# How long one addressed segment keeps the steward `listening` (interim ones come ~1/s).
LISTEN_HOLD_S = 4.0
SET_TIMEOUT_S = 1.0
RETRY_S = 2.0
MAX_TRACKED = 256
STALE_S = 3600.0

SetAttributes = Callable[[dict[str, str]], Awaitable[None]]


class AgentState:
    """Sets the steward's `lk.agent.state` attribute from its runs and listening, smoothed so it
    does not flicker."""

    def __init__(
        self,
        room_id: str,
        set_attributes: SetAttributes,
        *,
        rise_s: float = RISE_S,
        fall_s: float = FALL_S,
        listen_hold_s: float = LISTEN_HOLD_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.room_id = room_id
        self._set = set_attributes
        self.rise_s = rise_s
        self.fall_s = fall_s
        self.listen_hold_s = listen_hold_s
        self._clock = clock
        self._working: dict[str, float] = {}  # session id → when it last said it works
        self._heard_until = 0.0
        self._changed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._failures = SampledLog(log, clock=clock)
        # What the room was last told (None: nothing yet); every value sent, for tests.
        self.published: AgentStateName | None = None
        self.history: list[AgentStateName] = []

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name=f"agent_state:{self.room_id}")

    async def close(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    # --- what it is derived from ---------------------------------------------------------
    def session_status(self, session_id: str, status: str) -> None:
        """A run announced `status` (every session status the room hears passes here)."""
        if status in _NOT_WORKING:
            self._working.pop(session_id, None)
        else:
            if session_id not in self._working:
                self._heard_until = 0.0  # a run started: what was heard is its prompt
            self._working.pop(session_id, None)  # re-inserted last: the oldest go first
            self._working[session_id] = self._clock()
            while len(self._working) > MAX_TRACKED:
                del self._working[next(iter(self._working))]
        self._changed.set()

    @property
    def runs(self) -> tuple[str, ...]:
        """The runs counted as working, oldest first."""
        return tuple(self._working)

    def heard(self) -> None:
        """A speaker addressing the steward is being heard."""
        self._heard_until = self._clock() + self.listen_hold_s
        self._changed.set()

    def wanted(self) -> AgentStateName:
        now = self._clock()
        for sid in [sid for sid, at in self._working.items() if now - at > STALE_S]:
            del self._working[sid]
        if self._working:
            return "thinking"
        if now < self._heard_until:
            return "listening"
        return "idle"

    # --- the one writer ------------------------------------------------------------------
    async def _run(self) -> None:
        while True:
            target = self.wanted()
            if target == self.published:
                # Steady: until something changes, or the listening window closes.
                left = self._heard_until - self._clock() if target == "listening" else None
                await self._wait(left)
                continue
            hold = self.rise_s if _RANK[target] > _RANK[self.published] else self.fall_s
            if not await self._held(target, hold):
                continue
            # Tried again after RETRY_S, unless the wish changed while the set was pending
            # (`_wait` clears the change flag: that change would be slept through).
            if not await self._publish(target) and self.wanted() == target:
                await self._wait(RETRY_S)

    async def _held(self, target: AgentStateName, hold: float) -> bool:
        """Whether the wish stayed `target` for `hold` seconds."""
        deadline = self._clock() + hold
        while (left := deadline - self._clock()) > 0:
            await self._wait(left)
            if self.wanted() != target:
                return False
        return True

    async def _wait(self, timeout: float | None) -> None:
        self._changed.clear()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout if timeout is None else max(0.0, timeout)):
                await self._changed.wait()

    async def _publish(self, state: AgentStateName) -> bool:
        try:
            async with asyncio.timeout(SET_TIMEOUT_S):
                await self._set({ATTR_AGENT_STATE: state})
        except Exception as err:  # the room may be going away: the state is UI only
            self._failures.warning(
                ("agent_state",), "agent_state_failed", room=self.room_id, error=repr(err)
            )
            self.published = None  # it may have been applied: what the room shows is unknown
            return False
        self.published = state
        self.history.append(state)
        del self.history[:-64]
        log.debug("agent_state", room=self.room_id, state=state)
        return True
