"""Which participant session (SID) each prompt grant is bound to (migration 0009)."""

from __future__ import annotations

from datetime import UTC, datetime

import asyncpg

from steward.store.reconnect import ReachablePool


class GrantBindings:
    """Stores which participant session each grant nonce is bound to, until the grant expires."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = ReachablePool(pool)  # a Postgres restart is waited out, not a failed run

    async def load(self, room_id: str) -> dict[str, str]:
        """nonce → SID of the room's unexpired bindings (expired ones are deleted)."""
        now = datetime.now(UTC)
        await self.pool.execute(
            "DELETE FROM grant_bindings WHERE room_id = $1 AND expires_at <= $2", room_id, now
        )
        rows = await self.pool.fetch(
            "SELECT nonce, sid FROM grant_bindings WHERE room_id = $1", room_id
        )
        return {r["nonce"]: r["sid"] for r in rows}

    async def bind(
        self, room_id: str, nonce: str, *, identity: str, sid: str, expires_at: int
    ) -> str:
        """Bind the grant to `sid` unless it is bound already; returns the SID it is bound to."""
        bound = await self.pool.fetchval(
            """INSERT INTO grant_bindings (room_id, nonce, identity, sid, expires_at)
               VALUES ($1, $2, $3, $4, $5)
               ON CONFLICT (room_id, nonce) DO UPDATE SET room_id = EXCLUDED.room_id
               RETURNING sid""",
            room_id,
            nonce,
            identity,
            sid,
            datetime.fromtimestamp(expires_at, UTC),
        )
        return str(bound)
