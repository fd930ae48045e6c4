"""Named stages a runtime object reports to whoever times it (the benches).

An object owns a `StageHooks`; it reports a stage where the work happens and listeners
subscribe by name, so nothing outside the object replaces its methods to time them. With
no listener for a stage a report is one dict lookup and `timed` hands the work back as is.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TypeVar

from steward.obs.logging import get_logger

log = get_logger(__name__)

T = TypeVar("T")

__all__ = ["Stage", "StageEvent", "StageHooks", "StageListener"]


class Stage(StrEnum):
    """Each stage names the fields its `detail` carries."""

    PUBLISH_ISSUED = "publish_issued"  # payload, topic, destinations
    PUBLISH_COMPLETED = "publish_completed"  # started = when issued
    OUTBOX_APPEND = "outbox_append"  # rows; started = when the append began
    PROMPT_STARTED = "prompt_started"  # result = the session id (None when it failed)
    STREAM_READ = "stream_read"  # kind, request_id; at = when the stream was handled
    CONTEXT_RPC_REPLY = "context_rpc_reply"  # request_id; started = when the RPC was sent


@dataclass(frozen=True, slots=True)
class StageEvent:
    """One report of a stage: which, when, when its work started, what it gave and any details."""

    stage: Stage
    at: float  # time.monotonic() when reported
    started: float | None = None
    result: object = None
    detail: Mapping[str, object] = field(default_factory=dict)


StageListener = Callable[[StageEvent], None]


class StageHooks:
    """Listeners of one object's stages. Listening twice with the same callable (e.g. one
    bound method) adds it once."""

    def __init__(self) -> None:
        self._listeners: dict[Stage, list[StageListener]] = {}

    def listen(self, stage: Stage, listener: StageListener) -> Callable[[], None]:
        """Call `listener` on each report of `stage`; returns the call that stops it."""
        listeners = self._listeners.setdefault(stage, [])
        if listener not in listeners:
            listeners.append(listener)

        def stop() -> None:
            if listener in listeners:
                listeners.remove(listener)

        return stop

    def listening(self, stage: Stage) -> bool:
        return bool(self._listeners.get(stage))

    def report(
        self,
        stage: Stage,
        *,
        started: float | None = None,
        result: object = None,
        **detail: object,
    ) -> None:
        listeners = self._listeners.get(stage)
        if not listeners:
            return
        event = StageEvent(stage, time.monotonic(), started, result, detail)
        for listener in tuple(listeners):
            try:
                listener(event)
            except Exception as err:  # a listener's fault must not break the runtime's work
                log.warning("stage_listener_failed", stage=stage.value, error=repr(err))

    def timed(self, stage: Stage, work: Awaitable[T], **detail: object) -> Awaitable[T]:
        """`work`, reporting `stage` when it ends (also when it fails) with its result and
        `started` = now, the moment it was handed over; `work` itself when no one listens."""
        if not self.listening(stage):
            return work
        return self._timed(stage, work, time.monotonic(), detail)

    async def _timed(
        self, stage: Stage, work: Awaitable[T], started: float, detail: dict[str, object]
    ) -> T:
        result: T | None = None
        try:
            result = await work
            return result
        finally:
            self.report(stage, started=started, result=result, **detail)
