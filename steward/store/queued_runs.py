"""HTTP runs waiting for their room's steward (migrations 0015, 0019).

`POST /api/canvas-agent/run` for a room the receiving process does not serve stores the run
here with the session id the browsers will see. The steward holding the room's lease takes
the runs one at a time, oldest first; the take is one conditional UPDATE fenced by that lease
(the run still waiting and the lease token still live), so a run starts once even when several
processes accept runs for the room. A run nobody takes before `expires_at` is `expired`.

A taker may die between the take and the start of the run's session. Such a run waits again
once the taker's token no longer holds the room's lease and no `agent_sessions` row exists for
it: the next holder takes it (once: its own token is then the live one) under the same session
id, and its caller reads `queued` meanwhile. Finished and expired rows are pruned after a
retention (`prune`).
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from datetime import datetime

import asyncpg
from pydantic import TypeAdapter

from steward.obs.logging import get_logger
from steward.protocol.box import Box
from steward.store.reconnect import ReachablePool

log = get_logger(__name__)
# A stored viewport read back with the wire's checks (it came from a caller once).
_BOX = TypeAdapter(Box)

# Taken, but its taker's lease is gone and its session never started: the taker died between.
_ORPHANED = """(
    NOT EXISTS (SELECT 1 FROM agent_sessions s WHERE s.session_id = q.session_id)
    AND NOT EXISTS (
        SELECT 1 FROM room_leases l
        WHERE l.room_id = q.room_id AND l.token = q.taken_token AND l.expires_at > now()
    )
)"""
# Nobody took it, or its taker died before starting it; and its time has not run out.
_WAITING = f"q.expires_at > now() AND (q.taken_at IS NULL OR {_ORPHANED})"
# The oldest waiting run of the room, taken only while `token` still holds the room's lease.
# FOR UPDATE makes a concurrent taker wait for the first and then pass over the row it took
# (re-checked after the wait: the row it passes over now has a live taker).
_TAKE = f"""
UPDATE queued_runs
SET state = 'taken', taken_at = clock_timestamp(), taken_by = $2, taken_token = $3
WHERE session_id = (
    SELECT session_id FROM queued_runs q
    WHERE room_id = $1 AND {_WAITING}
    ORDER BY created_at, session_id LIMIT 1 FOR UPDATE
)
AND taken_token IS DISTINCT FROM $3
AND EXISTS (
    SELECT 1 FROM room_leases
    WHERE room_id = $1 AND token = $3 AND expires_at > now()
)
RETURNING session_id, room_id, prompt, model, viewport::text AS viewport, asker, fairies
"""
# Older than the retention, past its wait, and not bound to a session still running; a bounded
# batch per call (it runs where the table grows: on each put).
_PRUNE = """
DELETE FROM queued_runs WHERE session_id IN (
    SELECT q.session_id FROM queued_runs q
    WHERE q.created_at < now() - make_interval(secs => $1) AND q.expires_at <= now()
      AND NOT EXISTS (
          SELECT 1 FROM agent_sessions s WHERE s.session_id = q.session_id AND s.status = 'running'
      )
    LIMIT $2
)
"""
# What a caller reads: a taken run's state is its session's (`agent_sessions.status`).
_STATE = f"""
SELECT q.session_id, q.room_id, q.created_at, q.taken_at,
       CASE WHEN s.status IS NOT NULL THEN s.status
            WHEN (q.taken_at IS NULL OR {_ORPHANED}) AND q.expires_at <= now() THEN 'expired'
            WHEN q.taken_at IS NULL OR {_ORPHANED} THEN 'queued'
            ELSE 'taken' END AS state,
       s.outcome
FROM queued_runs q LEFT JOIN agent_sessions s ON s.session_id = q.session_id
WHERE q.session_id = $1
"""


@dataclass(frozen=True)
class QueuedRun:
    """An HTTP run waiting for its room's steward: room, prompt, model, view, asker, fairies."""

    session_id: str
    room_id: str
    prompt: str
    model: str | None
    viewport: Box | None
    asker: str
    fairies: tuple[str, ...] = ()  # the fairies it is for, in the order picked


@dataclass(frozen=True)
class QueuedRunState:
    """Where a queued run stands: queued, taken, running or ended, and when."""

    session_id: str
    room_id: str
    state: str  # queued | expired | taken | running | done | canceled | error
    outcome: str | None
    created_at: datetime
    taken_at: datetime | None


class QueuedRuns:
    """The queue of HTTP runs in Postgres: put, take one at a time oldest first, and record how each
    went."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = ReachablePool(pool)  # a Postgres restart is waited out, not a failed run

    async def put(self, run: QueuedRun, *, ttl_s: float) -> None:
        await self.pool.execute(
            "INSERT INTO queued_runs (session_id, room_id, prompt, model, viewport, asker,"
            " expires_at, fairies) VALUES ($1, $2, $3, $4, $5::jsonb, $6,"
            " now() + make_interval(secs => $7), $8::text[])",
            run.session_id,
            run.room_id,
            run.prompt,
            run.model,
            None if run.viewport is None else json.dumps(run.viewport.to_dict()),
            run.asker,
            ttl_s,
            list(run.fairies),
        )

    async def drop(self, session_id: str) -> None:
        """Forget a run that was never announced (its dispatch could not be created)."""
        await self.pool.execute(
            "DELETE FROM queued_runs WHERE session_id = $1 AND taken_at IS NULL", session_id
        )

    async def waiting(self, room_id: str) -> bool:
        """Whether the room has a run to take (a cheap check for the pickup loop)."""
        return room_id in await self.rooms_waiting([room_id])

    async def take(self, room_id: str, *, owner: str, token: int) -> QueuedRun | None:
        """The room's oldest waiting run, now ours; None if there is none or the lease with
        `token` no longer holds the room."""
        row = await self.pool.fetchrow(_TAKE, room_id, owner, token)
        if row is None:
            return None
        viewport = row["viewport"]
        return QueuedRun(
            session_id=row["session_id"],
            room_id=row["room_id"],
            prompt=row["prompt"],
            model=row["model"],
            viewport=None if viewport is None else _BOX.validate_json(viewport),
            asker=row["asker"],
            fairies=tuple(row["fairies"] or ()),
        )

    async def rooms_waiting(self, room_ids: list[str]) -> set[str]:
        """Which of `room_ids` have a run to take, in one query."""
        rows = await self.pool.fetch(
            "SELECT DISTINCT room_id FROM queued_runs q"
            f" WHERE room_id = ANY($1::text[]) AND {_WAITING}",
            room_ids,
        )
        return {str(r["room_id"]) for r in rows}

    async def expire(self) -> int:
        """Mark runs whose time ran out untaken (readers compute it too; this keeps it)."""
        done = await self.pool.execute(
            "UPDATE queued_runs SET state = 'expired'"
            " WHERE state = 'queued' AND taken_at IS NULL AND expires_at <= now()"
        )
        return int(done.split()[-1])

    async def prune(self, *, retention_s: float, limit: int = 100) -> int:
        """Forget up to `limit` finished or expired runs older than `retention_s`."""
        done = await self.pool.execute(_PRUNE, retention_s, limit)
        return int(done.split()[-1])

    async def state(self, session_id: str) -> QueuedRunState | None:
        row = await self.pool.fetchrow(_STATE, session_id)
        return None if row is None else QueuedRunState(**dict(row))


class RunBell:
    """Wakes the pickup of every served room that has a run waiting, with ONE query per beat
    for all of them: a poll per room cost every idle room a round trip each beat."""

    def __init__(self, runs: QueuedRuns, period_s: float) -> None:
        self.runs = runs
        self.period_s = period_s
        self._bells: dict[str, asyncio.Event] = {}

    def register(self, room_id: str) -> asyncio.Event:
        """The room's bell: set when a run is waiting (its pickup clears it)."""
        return self._bells.setdefault(room_id, asyncio.Event())

    def unregister(self, room_id: str) -> None:
        self._bells.pop(room_id, None)

    async def ring(self) -> None:
        """One beat: look for waiting runs of every registered room, wake those that have."""
        rooms = list(self._bells)
        if not rooms:
            return
        for room_id in await self.runs.rooms_waiting(rooms):
            bell = self._bells.get(room_id)
            if bell is not None:
                bell.set()

    async def run(self) -> None:
        while True:
            await asyncio.sleep(self.period_s)
            try:
                await self.ring()
            except Exception as err:  # Postgres away: next beat
                log.warning("queued_run_poll_failed", error=str(err))
