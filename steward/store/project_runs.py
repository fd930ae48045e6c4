"""What the room needs of a project to steer it (migration 0021): who asked for it, the
prompt's run that started it, and every run of its fairies while it lasted (read off
`agent_sessions`), so it is undone as one."""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg

from steward.store.reconnect import ReachablePool


@dataclass(frozen=True)
class ProjectRecord:
    """A project as the room steers it: its room, status, who asked for it, the prompt's run
    and its title (what replies call it)."""

    project_id: str
    room_id: str
    status: str
    asker: str | None
    session_id: str | None
    title: str = ""


class ProjectRuns:
    """Reads and writes what the room needs to steer a project, and every run of its fairies."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = ReachablePool(pool)  # a Postgres restart is waited out, not a failed run

    async def set_origin(
        self, project_id: str, *, asker: str | None, session_id: str | None
    ) -> None:
        """Who asked for the project and the run of that prompt (a project row exists)."""
        await self.pool.execute(
            "UPDATE fairy_projects SET asker = $2, session_id = $3 WHERE project_id = $1",
            project_id,
            asker,
            session_id,
        )

    async def record(self, project_id: str) -> ProjectRecord | None:
        row = await self.pool.fetchrow(
            "SELECT project_id, room_id, status, asker, session_id, title FROM fairy_projects"
            " WHERE project_id = $1",
            project_id,
        )
        if row is None:
            return None
        return ProjectRecord(
            row["project_id"],
            row["room_id"],
            row["status"],
            row["asker"],
            row["session_id"],
            row["title"],
        )

    async def started_by(self, room_id: str, session_id: str) -> str | None:
        """The project the prompt's run `session_id` started, if it started one."""
        value = await self.pool.fetchval(
            "SELECT project_id FROM fairy_projects WHERE room_id = $1 AND session_id = $2"
            " ORDER BY created_at DESC LIMIT 1",
            room_id,
            session_id,
        )
        return str(value) if value is not None else None

    async def runs(self, room_id: str, project_id: str) -> list[str]:
        """The project's runs, oldest first: the prompt's run that started it, then every run
        of its fairies (lead and members) opened while it lasted."""
        rows = await self.pool.fetch(
            "SELECT s.session_id FROM agent_sessions s JOIN fairy_projects p"
            " ON p.project_id = $2 AND p.room_id = s.room_id"
            " WHERE s.room_id = $1 AND (s.session_id = p.session_id OR ("
            "   s.fairy_id = ANY(array_append(p.members, p.orchestrator))"
            "   AND s.created_at >= p.created_at"
            "   AND (p.status = 'active' OR s.created_at <= p.updated_at)))"
            " ORDER BY s.created_at, s.session_id",
            room_id,
            project_id,
        )
        return [r["session_id"] for r in rows]
