"""Fairy state in Postgres (tables from 0004_fairies.sql).

Rows go in and out as plain dicts keyed by column name (the store does not import
`steward.fairies`; `steward.fairies.persistence` maps rows to the fairy types). Every write
is an upsert or an idempotent insert, so replaying a write after a crash changes nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import asyncpg

from steward.store.reconnect import ReachablePool

Row = dict[str, Any]


def _json(value: Any) -> str | None:
    return None if value is None else json.dumps(value)


def _rows(records: Iterable[asyncpg.Record], *json_cols: str) -> list[Row]:
    out: list[Row] = []
    for r in records:
        row = dict(r)
        for col in json_cols:
            if isinstance(row.get(col), str):
                row[col] = json.loads(row[col])
        out.append(row)
    return out


_INSERT_WAIT = (
    "INSERT INTO fairy_waits (room_id, agent_id, key, message) VALUES ($1,$2,$3,$4)"
    " ON CONFLICT DO NOTHING"
)


def _wait_args(room_id: str, waits: Sequence[Mapping[str, Any]]) -> list[tuple[str, ...]]:
    return [(room_id, w["agent_id"], w["key"], w["message"]) for w in waits]


_HISTORY_COLUMNS = (
    "item_id, kind, memory_level, text, origin, action::text AS action, user_text, run, asker,"
    " extract(epoch FROM created_at)::float8 AS created"
)


class FairyStore:
    """Fairy state in Postgres: roster, histories, todos, projects, tasks and waits."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        # A fairy's run writes as it goes; a Postgres restart mid-run is waited out.
        self.pool = ReachablePool(pool)

    # -- fairies (roster, modes, positions) ---------------------------------------------
    async def save_fairy(self, room_id: str, f: Mapping[str, Any]) -> None:
        await self.pool.execute(
            "INSERT INTO fairies (room_id, fairy_id, name, color, role, mode, x, y, personality,"
            " task_bounds, continuations, asker, model)"
            " VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10::jsonb,$11,$12,$13)"
            " ON CONFLICT (room_id, fairy_id) DO UPDATE SET name=EXCLUDED.name,"
            " color=EXCLUDED.color, role=EXCLUDED.role, mode=EXCLUDED.mode, x=EXCLUDED.x,"
            " y=EXCLUDED.y, personality=EXCLUDED.personality, task_bounds=EXCLUDED.task_bounds,"
            " continuations=EXCLUDED.continuations, asker=EXCLUDED.asker, model=EXCLUDED.model,"
            " updated_at=now()",
            room_id,
            f["fairy_id"],
            f["name"],
            f["color"],
            f["role"],
            f["mode"],
            float(f.get("x", 0.0)),
            float(f.get("y", 0.0)),
            f.get("personality", ""),
            _json(f.get("task_bounds")),
            int(f.get("continuations", 0)),
            f.get("asker"),
            f.get("model"),
        )

    async def load_fairies(self, room_id: str) -> list[Row]:
        rows = await self.pool.fetch(
            "SELECT fairy_id, name, color, role, mode, x, y, personality,"
            " task_bounds::text AS task_bounds, continuations, asker, model"
            " FROM fairies WHERE room_id = $1"
            " ORDER BY fairy_id",
            room_id,
        )
        return _rows(rows, "task_bounds")

    # -- history ------------------------------------------------------------------------
    async def append_history(
        self, room_id: str, fairy_id: str, items: Sequence[Mapping[str, Any]]
    ) -> None:
        if not items:
            return
        await self.pool.executemany(
            "INSERT INTO fairy_history (room_id, fairy_id, item_id, kind, memory_level, text,"
            " origin, action, user_text, run, asker, created_at)"
            " VALUES ($1,$2,$3,$4,$5,$6,$7,$8::jsonb,$9,$10,$11,coalesce(to_timestamp($12),now()))"
            " ON CONFLICT DO NOTHING",
            [
                (
                    room_id,
                    fairy_id,
                    i["item_id"],
                    i["kind"],
                    i["memory_level"],
                    i["text"],
                    i.get("origin"),
                    _json(i.get("action")),
                    i.get("user_text"),
                    i.get("run"),
                    i.get("asker"),
                    i.get("created"),
                )
                for i in items
            ],
        )

    async def load_history(self, room_id: str, fairy_id: str) -> list[Row]:
        rows = await self.pool.fetch(
            f"SELECT {_HISTORY_COLUMNS} FROM fairy_history"
            " WHERE room_id = $1 AND fairy_id = $2 ORDER BY ordinal",
            room_id,
            fairy_id,
        )
        return _rows(rows, "action")

    async def load_histories(self, room_id: str, prefix: str) -> list[Row]:
        """The history of every fairy of the room whose id starts with `prefix` (fairies kept
        off the roster), each row with its `fairy_id`, in the order they were written."""
        rows = await self.pool.fetch(
            f"SELECT fairy_id, {_HISTORY_COLUMNS} FROM fairy_history"
            " WHERE room_id = $1 AND starts_with(fairy_id, $2) ORDER BY ordinal",
            room_id,
            prefix,
        )
        return _rows(rows, "action")

    # -- todos --------------------------------------------------------------------------
    async def save_todos(
        self, room_id: str, fairy_id: str, todos: Sequence[Mapping[str, Any]]
    ) -> None:
        async with self.pool.acquire() as conn, conn.transaction():
            await conn.execute(
                "DELETE FROM fairy_todos WHERE room_id = $1 AND fairy_id = $2", room_id, fairy_id
            )
            await conn.executemany(
                "INSERT INTO fairy_todos (room_id, fairy_id, todo_id, text, status)"
                " VALUES ($1,$2,$3,$4,$5)",
                [(room_id, fairy_id, int(t["id"]), t["text"], t["status"]) for t in todos],
            )

    async def load_todos(self, room_id: str, fairy_id: str) -> list[Row]:
        rows = await self.pool.fetch(
            "SELECT todo_id AS id, text, status FROM fairy_todos"
            " WHERE room_id = $1 AND fairy_id = $2 ORDER BY todo_id",
            room_id,
            fairy_id,
        )
        return _rows(rows)

    # -- projects and tasks -------------------------------------------------------------
    async def save_project(self, p: Mapping[str, Any]) -> None:
        await self.pool.execute(
            "INSERT INTO fairy_projects (project_id, room_id, title, description, plan, kind,"
            " orchestrator, members, status) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9)"
            " ON CONFLICT (project_id) DO UPDATE SET title=EXCLUDED.title,"
            " description=EXCLUDED.description, plan=EXCLUDED.plan, members=EXCLUDED.members,"
            " status=EXCLUDED.status, updated_at=now()",
            p["project_id"],
            p["room_id"],
            p["title"],
            p["description"],
            p["plan"],
            p["kind"],
            p["orchestrator"],
            list(p["members"]),
            p["status"],
        )

    async def save_task(self, t: Mapping[str, Any]) -> None:
        await self.pool.execute(
            "INSERT INTO fairy_tasks (task_id, room_id, project_id, title, text, status,"
            " assigned_to, bounds, created_by) VALUES ($1,$2,$3,$4,$5,$6,$7,$8::jsonb,$9)"
            " ON CONFLICT (task_id) DO UPDATE SET title=EXCLUDED.title, text=EXCLUDED.text,"
            " status=EXCLUDED.status, assigned_to=EXCLUDED.assigned_to, bounds=EXCLUDED.bounds,"
            " updated_at=now()",
            t["task_id"],
            t["room_id"],
            t.get("project_id"),
            t["title"],
            t["text"],
            t["status"],
            t.get("assigned_to"),
            _json(t.get("bounds")),
            t.get("created_by"),
        )

    async def delete_task(self, task_id: str) -> None:
        await self.pool.execute("DELETE FROM fairy_tasks WHERE task_id = $1", task_id)

    async def load_projects(self, room_id: str) -> list[Row]:
        rows = await self.pool.fetch(
            "SELECT project_id, room_id, title, description, plan, kind, orchestrator, members,"
            " status FROM fairy_projects WHERE room_id = $1 ORDER BY created_at, project_id",
            room_id,
        )
        out = _rows(rows)
        for r in out:
            r["members"] = list(r["members"])
        return out

    async def load_tasks(self, room_id: str) -> list[Row]:
        rows = await self.pool.fetch(
            "SELECT task_id, room_id, project_id, title, text, status, assigned_to,"
            " bounds::text AS bounds, created_by FROM fairy_tasks WHERE room_id = $1"
            " ORDER BY created_at, task_id",
            room_id,
        )
        return _rows(rows, "bounds")

    # -- waits --------------------------------------------------------------------------
    async def add_waits(self, room_id: str, waits: Sequence[Mapping[str, Any]]) -> None:
        await self.pool.executemany(_INSERT_WAIT, _wait_args(room_id, waits))

    async def save_waits(self, room_id: str, waits: Sequence[Mapping[str, Any]]) -> None:
        """The room's waits become exactly `waits` (kept rows keep their `created_at`)."""
        agents, keys = [w["agent_id"] for w in waits], [w["key"] for w in waits]
        async with self.pool.acquire() as conn, conn.transaction():
            await conn.execute(
                "DELETE FROM fairy_waits WHERE room_id = $1 AND (agent_id, key) NOT IN"
                " (SELECT * FROM unnest($2::text[], $3::text[]))",
                room_id,
                agents,
                keys,
            )
            await conn.executemany(_INSERT_WAIT, _wait_args(room_id, waits))

    async def remove_waits(self, room_id: str, key: str) -> None:
        await self.pool.execute(
            "DELETE FROM fairy_waits WHERE room_id = $1 AND key = $2", room_id, key
        )

    async def clear_waits(self, room_id: str, agent_id: str) -> None:
        await self.pool.execute(
            "DELETE FROM fairy_waits WHERE room_id = $1 AND agent_id = $2", room_id, agent_id
        )

    async def load_waits(self, room_id: str) -> list[Row]:
        rows = await self.pool.fetch(
            "SELECT agent_id, key, message FROM fairy_waits WHERE room_id = $1"
            " ORDER BY created_at, agent_id, key",
            room_id,
        )
        return _rows(rows)

    # -- the request queue --------------------------------------------------------------
    async def enqueue(self, room_id: str, fairy_id: str, text: str, origin: str) -> int:
        value = await self.pool.fetchval(
            "INSERT INTO fairy_requests (room_id, fairy_id, text, origin, state)"
            " VALUES ($1,$2,$3,$4,'pending') RETURNING request_id",
            room_id,
            fairy_id,
            text,
            origin,
        )
        return int(value)

    async def set_request(self, request_id: int, state: str, session_id: str | None = None) -> None:
        await self.pool.execute(
            "UPDATE fairy_requests SET state = $2, session_id = coalesce($3, session_id),"
            " updated_at = now() WHERE request_id = $1",
            request_id,
            state,
            session_id,
        )

    async def open_requests(self, room_id: str) -> list[Row]:
        rows = await self.pool.fetch(
            "SELECT request_id, fairy_id, text, origin, state, session_id FROM fairy_requests"
            " WHERE room_id = $1 AND state IN ('pending', 'running') ORDER BY request_id",
            room_id,
        )
        return _rows(rows)

    async def in_flight_partials(self, session_id: str) -> list[Row]:
        """Actions of `session_id` whose last version in the outbox is partial (never final).

        Returned as {id, name, params} so a resumed fairy can send their revert."""
        rows = await self.pool.fetch(
            "SELECT payload::text AS payload, partial FROM outbox WHERE session_id = $1"
            " ORDER BY seq",
            session_id,
        )
        last: dict[str, tuple[bool, Row]] = {}
        for r in rows:
            env = json.loads(r["payload"])
            for action in env.get("actions") or []:
                if isinstance(action, dict) and isinstance(action.get("id"), str):
                    last[action["id"]] = (bool(r["partial"]), action)
        return [a for partial, a in last.values() if partial]
