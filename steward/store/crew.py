"""A room's crew as its people chose it (table `room_crew`, migration 0021).

The rules of a change (the room's limit, unique names, a fairy that exists, a crew never
left empty) are pure functions of the crew as it stands (`summoned`, `renamed`,
`dismissed`), so they are tested without a database; `CrewStore` applies them inside one
transaction that holds the room's crew rows locked, so two changes at once cannot both pass
a check only one of them may pass. A room with no rows never chose: `load` returns None and
the caller (the fairy runtime) gives it the default crew, which the first change writes
down beside itself (`seed`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TypeAlias

import asyncpg
from asyncpg.pool import PoolConnectionProxy

from steward.store.reconnect import ReachablePool

# Colours handed out in order to summoned fairies that name none (tldraw's palette, the
# ones a fairy reads well in).
SUMMON_COLORS = (
    "violet",
    "green",
    "orange",
    "blue",
    "red",
    "yellow",
    "light-violet",
    "light-green",
    "light-blue",
    "light-red",
)
_Conn: TypeAlias = "PoolConnectionProxy[asyncpg.Record]"
LEAD_ROLES = frozenset({"orchestrator", "duo-orchestrator"})
FAIRY_ID_PREFIX = "fairy-"


class CrewRefused(ValueError):
    """A change the crew's rules refuse; its message is what the person who asked reads."""


@dataclass(frozen=True)
class CrewMate:
    """One fairy of a room's crew (dismissed ones keep their row)."""

    fairy_id: str
    position: int
    name: str
    color: str
    role: str
    personality: str = ""
    dismissed: bool = False


def active(crew: Sequence[CrewMate]) -> list[CrewMate]:
    return sorted((m for m in crew if not m.dismissed), key=lambda m: m.position)


def _find(crew: Sequence[CrewMate], fairy_id: str) -> CrewMate:
    for m in crew:
        if m.fairy_id == fairy_id and not m.dismissed:
            return m
    names = ", ".join(f"{m.name} ({m.fairy_id})" for m in active(crew)) or "none"
    raise CrewRefused(f'there is no fairy "{fairy_id[:64]}" in this room\'s crew (it has: {names})')


def _name_free(crew: Sequence[CrewMate], name: str, *, but: str | None = None) -> None:
    for m in active(crew):
        if m.fairy_id != but and m.name.casefold() == name.casefold():
            raise CrewRefused(f'the crew already has a fairy named "{m.name}"')


def summoned(
    crew: Sequence[CrewMate], *, name: str, personality: str, color: str | None, limit: int
) -> CrewMate:
    """The fairy `crew` gains: a drone with the next unused id and position."""
    present = active(crew)
    if len(present) >= limit:
        raise CrewRefused(f"this room's crew is full ({limit} fairies); dismiss one first")
    _name_free(crew, name)
    used = {m.fairy_id for m in crew}
    n = len(crew) + 1
    while f"{FAIRY_ID_PREFIX}{n}" in used:
        n += 1
    worn = {m.color for m in present}
    free = [c for c in SUMMON_COLORS if c not in worn]
    position = max((m.position for m in crew), default=-1) + 1
    return CrewMate(
        fairy_id=f"{FAIRY_ID_PREFIX}{n}",
        position=position,
        name=name,
        color=color or (free or list(SUMMON_COLORS))[0],
        role="drone",
        personality=personality,
    )


def renamed(crew: Sequence[CrewMate], fairy_id: str, name: str) -> CrewMate:
    mate = _find(crew, fairy_id)
    _name_free(crew, name, but=fairy_id)
    return replace(mate, name=name)


def dismissed(crew: Sequence[CrewMate], fairy_id: str) -> list[CrewMate]:
    """The rows that change: the dismissed fairy, and the fairy that leads in its place when
    it led (the first one left), so a crew always has a lead."""
    mate = _find(crew, fairy_id)
    rest = [m for m in active(crew) if m.fairy_id != fairy_id]
    if not rest:
        raise CrewRefused("a room keeps at least one fairy; summon another before dismissing")
    changed = [replace(mate, dismissed=True)]
    if mate.role in LEAD_ROLES and not any(m.role in LEAD_ROLES for m in rest):
        changed.append(replace(rest[0], role=mate.role))
    return changed


_COLUMNS = "fairy_id, position, name, color, role, personality, dismissed_at IS NOT NULL AS gone"


def _mate(r: asyncpg.Record) -> CrewMate:
    return CrewMate(
        fairy_id=r["fairy_id"],
        position=r["position"],
        name=r["name"],
        color=r["color"],
        role=r["role"],
        personality=r["personality"],
        dismissed=r["gone"],
    )


class CrewStore:
    """Reads and writes rooms' crews in Postgres (`room_crew`)."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = ReachablePool(pool)  # a Postgres restart is waited out, not a failed run

    async def load(self, room_id: str) -> list[CrewMate] | None:
        """Every fairy the room's crew ever had, by position; None: the room never chose."""
        rows = await self.pool.fetch(
            f"SELECT {_COLUMNS} FROM room_crew WHERE room_id = $1 ORDER BY position", room_id
        )
        return [_mate(r) for r in rows] or None

    async def summon(
        self,
        room_id: str,
        default: Sequence[CrewMate],
        *,
        name: str,
        personality: str,
        color: str | None,
        limit: int,
        by: str,
    ) -> CrewMate:
        async with self.pool.acquire() as conn, conn.transaction():
            crew = await self._locked(conn, room_id, default)
            mate = summoned(crew, name=name, personality=personality, color=color, limit=limit)
            await self._put(conn, room_id, [mate], by=by)
            return mate

    async def rename(
        self, room_id: str, default: Sequence[CrewMate], fairy_id: str, name: str
    ) -> CrewMate:
        async with self.pool.acquire() as conn, conn.transaction():
            mate = renamed(await self._locked(conn, room_id, default), fairy_id, name)
            await conn.execute(
                "UPDATE room_crew SET name = $3 WHERE room_id = $1 AND fairy_id = $2",
                room_id,
                fairy_id,
                name,
            )
            return mate

    async def dismiss(
        self, room_id: str, default: Sequence[CrewMate], fairy_id: str, *, by: str
    ) -> list[CrewMate]:
        """The dismissed fairy first, then the one that leads in its place (if any)."""
        async with self.pool.acquire() as conn, conn.transaction():
            changed = dismissed(await self._locked(conn, room_id, default), fairy_id)
            await conn.execute(
                "UPDATE room_crew SET dismissed_at = now(), dismissed_by = $3"
                " WHERE room_id = $1 AND fairy_id = $2",
                room_id,
                fairy_id,
                by,
            )
            for mate in changed[1:]:
                await conn.execute(
                    "UPDATE room_crew SET role = $3 WHERE room_id = $1 AND fairy_id = $2",
                    room_id,
                    mate.fairy_id,
                    mate.role,
                )
            return changed

    async def _locked(
        self, conn: _Conn, room_id: str, default: Sequence[CrewMate]
    ) -> list[CrewMate]:
        """The room's crew with its rows locked for this transaction; a room that never chose
        has `default` written first (the advisory lock serialises that first write)."""
        await conn.execute("SELECT pg_advisory_xact_lock(hashtext('room_crew:' || $1))", room_id)
        rows = await conn.fetch(
            f"SELECT {_COLUMNS} FROM room_crew WHERE room_id = $1 ORDER BY position", room_id
        )
        if rows:
            return [_mate(r) for r in rows]
        await self._put(conn, room_id, default, by=None)
        return list(default)

    async def _put(
        self, conn: _Conn, room_id: str, mates: Sequence[CrewMate], *, by: str | None
    ) -> None:
        await conn.executemany(
            "INSERT INTO room_crew (room_id, fairy_id, position, name, personality, color, role,"
            " created_by) VALUES ($1,$2,$3,$4,$5,$6,$7,$8)",
            [
                (room_id, m.fairy_id, m.position, m.name, m.personality, m.color, m.role, by)
                for m in mates
            ],
        )
