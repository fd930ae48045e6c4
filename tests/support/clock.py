"""Time moved in Postgres instead of waited for: a lease or a queued run runs out at once.

A test that needs a lease to lapse or a run to expire moves that row's times into the past
(an injected clock for the one row) rather than taking a short TTL and sleeping past it: a
short TTL on a loaded machine lapses between two statements that meant to hold it.
"""

from __future__ import annotations

import asyncpg


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
