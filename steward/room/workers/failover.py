"""Re-dispatch: rooms whose steward died get a new one.

A self-hosted livekit-server does not dispatch a job again when its worker dies: the old
dispatch stays listed with its job running (livekit/agents issue 1472) and the room is left
without a steward. Every `steward worker` therefore watches the room leases: a room whose
lease lapsed, whose owner process is gone (its liveness lock: steward/store/liveness.py) or
that a draining worker released, while people are still in it, gets a new
agent dispatch, which LiveKit hands to a live worker; that steward resumes the room from the
outbox and the durable fairy state. One conditional UPDATE per lapse (`claim_lapse`) lets one
worker act on it, so N workers create one dispatch, not N. A room nobody is in is released,
unless an HTTP run waits for it (queued, or taken by the dead steward and never started).
"""

from __future__ import annotations

import asyncio

from steward.obs.logging import get_logger
from steward.room.workers.livekit_admin import LiveKitAdmin
from steward.store.leases import RoomLeases
from steward.store.queued_runs import QueuedRuns
from steward.task_set import TaskSet

log = get_logger(__name__)

# Lapses older than this are no longer watched (the work per beat stays bounded).
HORIZON_S = 600.0
# A dead owner shows at once (steward/store/liveness.py): look at least this often.
MAX_PERIOD_S = 1.0


class FailoverWatcher:
    """Finds rooms whose steward died and hands each to a live worker again."""

    def __init__(
        self,
        leases: RoomLeases,
        admin: LiveKitAdmin,
        *,
        steward_identity: str,
        runs: QueuedRuns,
    ) -> None:
        self.leases = leases
        self.admin = admin
        self.steward_identity = steward_identity
        # HTTP runs waiting for a room keep it dispatched even with nobody in it.
        self.runs = runs
        # A lapse is seen within a third of the lease, a dead owner within a second.
        self.period_s = min(leases.ttl_s / 3, MAX_PERIOD_S)
        # A dispatch no worker acted on (all full, a job that failed) is tried again.
        self.retry_s = max(4 * leases.ttl_s, 10.0)
        self._tasks = TaskSet("redispatch_crashed")

    def start(self) -> None:
        if not self._tasks:
            self._tasks.spawn(self._loop())

    async def close(self) -> None:
        await self._tasks.close()
        await self.admin.aclose()

    async def sweep(self) -> list[str]:
        """One look at the leases; the rooms this worker dispatched."""
        dispatched: list[str] = []
        for room in await self.leases.unattended(HORIZON_S):
            token = await self.leases.claim_lapse(room, retry_s=self.retry_s)
            if token is None:
                continue  # another worker has it, or a steward took the room meanwhile
            try:
                people = await self.admin.browsers(room)
                # An HTTP run queued for it needs a steward even with nobody in the room.
                if not people and not await self.runs.waiting(room):
                    await self.leases.vacate(room, token)
                    log.info("room_vacated", room=room, token=token)
                    continue
                # A dead steward stays in the room until LiveKit times it out (~20 s); that
                # removal would end the new steward's job too (LiveKit maps the identity to
                # the job: livekit/livekit issue 4887), so it goes before the new one comes.
                await self.admin.remove(room, self.steward_identity)
                await self.admin.dispatch(room, reason="lease lapsed")
            except Exception as err:  # LiveKit away: the claim runs out, then it is retried
                log.warning("redispatch_failed", room=room, error=str(err))
                continue
            dispatched.append(room)
        return dispatched

    async def _loop(self) -> None:
        while True:
            await asyncio.sleep(self.period_s)
            try:
                await self.sweep()
            except Exception as err:  # Postgres away: next beat
                log.warning("redispatch_sweep_failed", error=str(err))
