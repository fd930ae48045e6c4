"""What the room needs of a project to steer it (migration 0019): who asked for it, the
prompt's run that started it, and every run of its fairies, so it is undone as one."""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg


@dataclass(frozen=True)
class ProjectRecord:
    project_id: str
    room_id: str
    status: str
    asker: str | None
    session_id: str | None


class ProjectRuns:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

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

    async def add(self, room_id: str, project_id: str, session_id: str) -> None:
        await self.pool.execute(
            "INSERT INTO project_runs (room_id, project_id, session_id) VALUES ($1, $2, $3)"
            " ON CONFLICT DO NOTHING",
            room_id,
            project_id,
            session_id,
        )

    async def record(self, project_id: str) -> ProjectRecord | None:
        row = await self.pool.fetchrow(
            "SELECT project_id, room_id, status, asker, session_id FROM fairy_projects"
            " WHERE project_id = $1",
            project_id,
        )
        if row is None:
            return None
        return ProjectRecord(
            row["project_id"], row["room_id"], row["status"], row["asker"], row["session_id"]
        )

    async def runs(self, room_id: str, project_id: str) -> list[str]:
        """The project's runs in the order they were added (its starting prompt's first)."""
        rows = await self.pool.fetch(
            "SELECT session_id FROM project_runs WHERE room_id = $1 AND project_id = $2"
            " ORDER BY added_at, session_id",
            room_id,
            project_id,
        )
        return [r["session_id"] for r in rows]
