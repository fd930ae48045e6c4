"""The room's crew on the fairies' side: the roster follows what the room's people chose.

A room that never chose has the default crew (`DEFAULT_CREW`, with the roster's default
names, colours and personalities); `steward.store.crew` keeps what they chose once they
change it. `RoomCrew` is the fairy runtime's side of `steward.room.inbound.crew.CrewDesk`: told of a
change, it ends a dismissed fairy's work as a cancel (the lead's project is aborted with it),
then makes the roster match the crew and announces it on `agent:fairies` (a new name shows
at once). When a room's fairies load it applies the stored crew too, so a restart keeps it.
"""

from __future__ import annotations

import asyncio

from steward.fairies.modes import Role
from steward.fairies.project_steering import ProjectSteering, Rooms
from steward.fairies.room_fairies import RoomFairies
from steward.fairies.room_records import RoomRecords
from steward.fairies.roster import DEFAULT_COLORS, DEFAULT_NAMES, Roster, default_personality
from steward.obs.logging import get_logger
from steward.store.crew import CrewMate, CrewStore, active

log = get_logger(__name__)

# The default crew of a room that never chose: one orchestrator and two drones.
DEFAULT_CREW: tuple[tuple[str, Role], ...] = (
    ("fairy-1", "orchestrator"),
    ("fairy-2", "drone"),
    ("fairy-3", "drone"),
)
# How long a dismissal waits for the fairy's turn to stop (its previews withdrawn).
STOP_S = 10.0


def default_mates(crew: tuple[tuple[str, Role], ...] = DEFAULT_CREW) -> list[CrewMate]:
    """The default crew as the crew store writes it (ids, roles, and the roster's default
    name, colour and personality for each position)."""
    return [
        CrewMate(
            fairy_id=fid,
            position=n,
            name=DEFAULT_NAMES[n % len(DEFAULT_NAMES)],
            color=DEFAULT_COLORS[n % len(DEFAULT_COLORS)],
            role=role,
            personality=default_personality(n),
        )
        for n, (fid, role) in enumerate(crew)
    ]


def apply_crew(roster: Roster, crew: list[CrewMate]) -> list[str]:
    """The roster becomes the crew's present fairies, keeping each one's mode and position;
    returns the ids it dropped."""
    present = active(crew)
    keep = {m.fairy_id for m in present}
    dropped = [fid for fid in roster.fairies if fid not in keep]
    for fid in dropped:
        del roster.fairies[fid]
    for m in present:
        role: Role = m.role  # type: ignore[assignment]
        if m.fairy_id in roster.fairies:
            roster.update(
                m.fairy_id, name=m.name, color=m.color, role=role, personality=m.personality
            )
        else:
            roster.add(m.fairy_id, name=m.name, color=m.color, role=role, personality=m.personality)
    # Crew order (the lead first, as chosen), so presence lists them as the panel shows them.
    order = [m.fairy_id for m in present]
    roster.fairies = {fid: roster.fairies[fid] for fid in order}
    return dropped


class RoomCrew:
    """Keeps each room's fairy roster in step with the crew its people chose (loaded, summoned,
    renamed, dismissed)."""

    def __init__(
        self,
        rooms: Rooms,
        records: RoomRecords,
        store: CrewStore | None,
        steering: ProjectSteering | None = None,
        *,
        default: tuple[tuple[str, Role], ...] = DEFAULT_CREW,
    ) -> None:
        self._rooms = rooms
        self._records = records
        self._store = store
        self._steering = steering
        self._default = default

    def default_crew(self, room_id: str) -> list[CrewMate]:
        return default_mates(self._default)

    async def loaded(self, room: RoomFairies) -> None:
        """A room's fairies were loaded: the crew its people chose, else the default."""
        crew = await self._store.load(room.room_id) if self._store is not None else None
        if crew is None:
            if room.roster.fairies:
                return
            crew = default_mates(self._default)
        apply_crew(room.roster, crew)
        for fid in room.roster.fairies:
            await self._records.save_fairy(room, fid)

    async def crew_changed(self, room_id: str, crew: list[CrewMate], dismissed: str | None) -> None:
        room = await self._rooms.room(room_id)
        if dismissed is not None and dismissed in room.roster.fairies:
            await self._stop(room, dismissed)
        apply_crew(room.roster, crew)
        for fid in room.roster.fairies:
            await self._records.save_fairy(room, fid)
        await room.roster.announce()
        log.info(
            "crew_applied", room=room_id, fairies=list(room.roster.fairies), dismissed=dismissed
        )

    async def _stop(self, room: RoomFairies, fairy_id: str) -> None:
        """The dismissed fairy's work ends as a cancel: a lead's project is aborted (its
        drones stop too), a drone is stopped as a user's cancel stops it (its task back to
        todo, its lead told)."""
        project = room.board.active_project_of(fairy_id)
        if project is not None and project.orchestrator == fairy_id and self._steering:
            await self._steering.abort_project(room.room_id, project.id, "steward")
        elif not self._rooms.stop(room.room_id, fairy_id):
            log.info("dismissed_fairy_not_stopped", room=room.room_id, fairy=fairy_id)
        state = room.fairies.get(fairy_id)
        worker = None if state is None else state.worker
        if worker is not None:
            await asyncio.wait({worker}, timeout=STOP_S)
