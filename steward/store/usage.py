"""Model usage per session and room (tokens, estimated cost) and the daily room budget."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import asyncpg

from steward.model.base import Usage
from steward.store.reconnect import ReachablePool


class UsageRepo:
    """Rows in the `usage` table (migration 0001); days are UTC days."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = ReachablePool(pool)  # a Postgres restart is waited out, not a failed run

    async def record(
        self, *, session_id: str, room_id: str, model: str, usage: Usage, cost_usd: float
    ) -> None:
        await self.pool.execute(
            """INSERT INTO usage (session_id, room_id, model, input_tokens, output_tokens,
                                  cache_read_tokens, cache_write_tokens, cost_usd)
               VALUES ($1, $2, $3, $4, $5, $6, $7, $8)""",
            session_id,
            room_id,
            model,
            usage.input_tokens,
            usage.output_tokens,
            usage.cache_read_tokens,
            usage.cache_write_tokens,
            Decimal(f"{cost_usd:.6f}"),
        )

    async def spent_today(self, room_id: str, *, now: datetime | None = None) -> float:
        now = now or datetime.now(UTC)
        start = now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
        value = await self.pool.fetchval(
            """SELECT coalesce(sum(cost_usd), 0) FROM usage
               WHERE room_id = $1 AND created_at >= $2 AND created_at < $3""",
            room_id,
            start,
            start + timedelta(days=1),
        )
        return float(value or 0)

    async def session_totals(self, session_id: str) -> Usage:
        row = await self.pool.fetchrow(
            """SELECT coalesce(sum(input_tokens), 0) AS i, coalesce(sum(output_tokens), 0) AS o,
                      coalesce(sum(cache_read_tokens), 0) AS cr,
                      coalesce(sum(cache_write_tokens), 0) AS cw
               FROM usage WHERE session_id = $1""",
            session_id,
        )
        assert row is not None
        return Usage(int(row["i"]), int(row["o"]), int(row["cr"]), int(row["cw"]))

    async def session_summary(self, session_id: str) -> dict[str, object]:
        """Models, tokens and estimated cost of one session (its `session_ended` figures)."""
        row = await self.pool.fetchrow(
            """SELECT coalesce(string_agg(DISTINCT model, ','), '') AS models,
                      coalesce(sum(input_tokens), 0) AS i, coalesce(sum(output_tokens), 0) AS o,
                      coalesce(sum(cache_read_tokens), 0) AS cr,
                      coalesce(sum(cache_write_tokens), 0) AS cw,
                      coalesce(sum(cost_usd), 0) AS cost
               FROM usage WHERE session_id = $1""",
            session_id,
        )
        assert row is not None
        return {
            "models": [m for m in str(row["models"]).split(",") if m],
            "input_tokens": int(row["i"]),
            "output_tokens": int(row["o"]),
            "cache_read_tokens": int(row["cr"]),
            "cache_write_tokens": int(row["cw"]),
            "cost_usd": round(float(row["cost"]), 6),
        }


class LazyUsage:
    """A `UsageRepo` over a pool that exists only once the service has started."""

    def __init__(self, pool: Callable[[], asyncpg.Pool | None]) -> None:
        self._pool = pool

    def _repo(self) -> UsageRepo:
        pool = self._pool()
        if pool is None:
            raise RuntimeError("usage recorded before the database was opened")
        return UsageRepo(pool)

    async def spent_today(self, room_id: str) -> float:
        return await self._repo().spent_today(room_id)

    async def record(
        self, *, session_id: str, room_id: str, model: str, usage: Usage, cost_usd: float
    ) -> None:
        await self._repo().record(
            session_id=session_id, room_id=room_id, model=model, usage=usage, cost_usd=cost_usd
        )

    async def session_summary(self, session_id: str) -> dict[str, object]:
        return await self._repo().session_summary(session_id)
