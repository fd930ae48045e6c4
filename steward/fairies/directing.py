"""Directing a group: a prompt that picks its fairies (`PromptInput.fairies`) has them work
it as the kinds say (`kinds.directing`): one alone works it solo (`soloing`, planning its own
tasks), two as a duo (the first leads and also draws), three or more as a project the first
one leads, the others its drones.

Picking gives each picked fairy the role of its kind for the work; the lead takes exactly
the fairies picked with it as its project's members. A fairy goes back to its home role (the
crew's) when it is idle again, so `project:` still reaches the room's lead and every free
drone afterwards. Every picked fairy must be in the room and free.
"""

from __future__ import annotations

from steward.fairies.kinds import Role, directing
from steward.fairies.room_fairies import RoomFairies
from steward.fairies.room_records import RoomRecords


def picked_once(picked: tuple[str, ...]) -> tuple[str, ...]:
    """Each picked fairy once, in the order picked."""
    return tuple(dict.fromkeys(picked))


def refusal(room: RoomFairies, picked: tuple[str, ...]) -> str | None:
    """Why these fairies cannot take the prompt now (the user reads it), or None."""
    for fid in picked:
        if fid not in room.roster.fairies:
            return f"There is no fairy {fid!r} in this room."
    for fid in picked:
        if room.busy(fid) is not None:
            # The crew list says in plain words what it is doing; the mode's name is jargon.
            name = room.roster.get(fid).name
            return f"{name} is busy. Pick a free fairy, or ask again when it is done."
    return None


async def assign(room: RoomFairies, records: RoomRecords, picked: tuple[str, ...]) -> str:
    """Give the picked fairies the roles of their kinds; returns the one the prompt goes to
    (the first picked), which leads the others."""
    lead_kind, member_kind = directing(len(picked))
    lead, members = picked[0], picked[1:]
    roles: list[tuple[str, Role | None]] = [(lead, lead_kind.role)]
    roles += [(fid, member_kind.role if member_kind is not None else None) for fid in members]
    for fid, role in roles:
        if role is not None and room.roster.get(fid).role != role:
            room.roster.update(fid, role=role)
            await records.save_fairy(room, fid)
    room.fairy(lead).picked = members
    return lead


def back_home(room: RoomFairies, fairy_id: str, home: Role | None) -> None:
    """An idle fairy takes its home role again (None: it has none; it keeps its role). The
    caller saves the fairy."""
    room.fairy(fairy_id).picked = None
    if home is not None and room.roster.get(fairy_id).role != home:
        room.roster.update(fairy_id, role=home)
