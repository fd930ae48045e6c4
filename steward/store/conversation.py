"""A room's conversation in Postgres (migration 0020): prompts, whole chat messages, thoughts
and each run's latest status, in the room's order `n`, the newest `keep` per room."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

import asyncpg

from steward.store.reconnect import ReachablePool

ItemKind = Literal["prompt", "chat", "thought", "status"]


@dataclass(frozen=True)
class ConversationItem:
    """One item: `key` names what it is (a later version replaces it in place, keeping `n`);
    `payload` is its wire message as JSON (camelCase, as the browsers read it)."""

    n: int
    key: str
    kind: ItemKind
    session_id: str
    payload: dict[str, Any]


class ConversationRepo:
    """Reads and writes rooms' conversation items in Postgres, keeping the newest per room."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = ReachablePool(pool)  # a Postgres restart is waited out, not a failed run

    async def save(self, room_id: str, item: ConversationItem, *, keep: int) -> None:
        """Writes `item` (replacing the item of the same key, which keeps its `n`), then
        deletes all but the room's newest `keep` items, in one transaction."""
        async with self.pool.acquire() as conn, conn.transaction():
            await conn.execute(
                """INSERT INTO conversation_items (room_id, n, item_key, kind, session_id, payload)
                   VALUES ($1, $2, $3, $4, $5, $6::jsonb)
                   ON CONFLICT (room_id, item_key)
                   DO UPDATE SET payload = excluded.payload""",
                room_id,
                item.n,
                item.key,
                item.kind,
                item.session_id,
                json.dumps(item.payload),
            )
            await conn.execute(
                """DELETE FROM conversation_items
                   WHERE room_id = $1 AND n < (
                       SELECT n FROM conversation_items WHERE room_id = $1
                       ORDER BY n DESC OFFSET $2 LIMIT 1)""",
                room_id,
                keep - 1,
            )

    async def newest(self, room_id: str, limit: int) -> list[ConversationItem]:
        """The room's newest `limit` items, oldest first."""
        rows = await self.pool.fetch(
            """SELECT n, item_key, kind, session_id, payload FROM (
                   SELECT * FROM conversation_items WHERE room_id = $1
                   ORDER BY n DESC LIMIT $2) newest
               ORDER BY n""",
            room_id,
            limit,
        )
        return [
            ConversationItem(
                n=int(r["n"]),
                key=str(r["item_key"]),
                kind=r["kind"],
                session_id=str(r["session_id"]),
                payload=json.loads(r["payload"]),
            )
            for r in rows
        ]

    async def last_n(self, room_id: str) -> int:
        """The room's highest item number so far (0: none), where numbering goes on."""
        value = await self.pool.fetchval(
            "SELECT coalesce(max(n), 0) FROM conversation_items WHERE room_id = $1", room_id
        )
        return int(value or 0)
