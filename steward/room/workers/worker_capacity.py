"""How many rooms a `steward worker` takes: `STEWARD_WORKER_MAX_ROOMS`, counted by the worker.

livekit-agents can refuse jobs itself (its load threshold), but with no job running it
counts one accepted request as the whole threshold, so an idle worker handed a burst of rooms
(a failover, a fresh fleet) took one and told LiveKit it was full for the rest. The worker
leaves that check off and answers each request from this count instead.
"""

from __future__ import annotations

import time
from collections.abc import Callable

# An accepted job is counted until it runs or this long has passed (livekit-agents waits
# 7.5 s for the assignment; starting the job's thread takes a moment more).
LAUNCH_S = 30.0


class WorkerCapacity:
    """Jobs running (`running()`, their ids) plus those accepted and not started yet."""

    def __init__(
        self,
        max_rooms: int,
        running: Callable[[], set[str]],
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_rooms = max_rooms
        self._running = running
        self._clock = clock
        self._accepted: dict[str, float] = {}

    def take(self, job_id: str) -> bool:
        """Count `job_id` in and return True, or False when every slot is in use."""
        now = self._clock()
        running = self._running()
        for accepted, at in list(self._accepted.items()):
            if accepted in running or now - at > LAUNCH_S:
                del self._accepted[accepted]
        if len(running) + len(self._accepted) >= self.max_rooms or job_id in running:
            return False
        self._accepted[job_id] = now
        return True

    def load(self) -> float:
        """The share of slots in use, as LiveKit is told it (it prefers the least loaded)."""
        return len(self._running()) / self.max_rooms
