"""The sessions a room's fairies stream into.

A fairy answering a user's prompt streams into that prompt's session (lent to it for the
prompt's run); every other fairy that works opens a session of its own through the room's
`SessionFactory` (own id, own seq) and closes it when it has no more work.
"""

from __future__ import annotations

from typing import Protocol

from steward.fairies.room_fairies import RoomFairies, is_one_shot
from steward.obs.logging import get_logger
from steward.ports import SessionPort

log = get_logger(__name__)


class SessionFactory(Protocol):
    """Provided by the room (`steward.room.runs.sessions.SessionsByRoom`): a new run of the
    fairy's own (own id and seq) in the room's one registry of runs.

    With `resume`, the session reopens that (dead) session id and continues its seq; the
    room withdraws what the dead process left in flight in it (a final no-op version of each
    partial, undone by every receiver per (session, action id))."""

    async def open_session(
        self, room_id: str, fairy_id: str, *, resume: str | None = None
    ) -> SessionPort: ...

    async def close_session(self, session: SessionPort, outcome: str) -> None: ...


async def session_of(
    room: RoomFairies, fairy_id: str, factory: SessionFactory | None
) -> SessionPort:
    """The session the fairy's turns stream into: its open one, else the caller's it was
    lent (a user's prompt), else a new one of its own."""
    state = room.fairy(fairy_id)
    if state.session is not None:
        return state.session
    session = state.lent
    if session is None and factory is not None:
        session = await factory.open_session(room.room_id, fairy_id)
    if session is None:  # no factory (tests): borrow any caller's session
        lent = (f.lent for f in room.fairies.values() if not is_one_shot(f.fairy_id))
        session = next((s for s in lent if s is not None), None)
    if session is None:
        raise RuntimeError("no session available for fairy " + fairy_id)
    state.session = session
    return session


async def release(room: RoomFairies, fairy_id: str, factory: SessionFactory | None) -> None:
    """The fairy has no more work: close its own session (a lent one is its caller's)."""
    state = room.fairy(fairy_id)
    session, state.session = state.session, None
    lent = [f.lent for f in room.fairies.values() if f.lent is not None]
    if session is None or session in lent or factory is None:
        return
    try:
        await factory.close_session(session, "done")
    except Exception:
        log.exception("fairy_session_close_failed", room=room.room_id, fairy=fairy_id)
