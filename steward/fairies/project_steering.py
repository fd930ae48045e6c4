"""Projects as the room's people see and steer them, on the fairies' side.

Every save of the board or the waits publishes the state of each project it touched
(`project_state`, on `agent:project` through the room), so a card ticks off tasks as they
change. A new project's origin (who asked, the prompt's run: its lead's lent session) is
written down when it first appears. `abort_project` is the fairy runtime's side of
`steward.room.runs.steering.ProjectDesk`: the project ends as aborted, every fairy of it stops as
on a cancel (its queue dropped, its turn cancelled and waited for, so what it had half drawn
is withdrawn), and the lead says in the chat that it ended and how far it got.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Protocol

from steward.fairies.project_state import project_state
from steward.fairies.project_task import Task
from steward.fairies.projects import Project
from steward.fairies.room_fairies import FairyState, RoomFairies
from steward.fairies.room_records import RoomRecords
from steward.obs.logging import get_logger
from steward.protocol.messages import ProjectState
from steward.store.project_runs import ProjectRuns

log = get_logger(__name__)

PublishProject = Callable[[ProjectState], Awaitable[None]]
# How long an abort waits for its fairies' turns to stop.
STOP_S = 10.0


def _cancelled_by_user(state: FairyState) -> None:
    """The fairy's turn, about to be cancelled, withdraws its previews as on a user's cancel
    (until it has ended)."""
    state.user_cancelled = True
    turn = state.turn
    assert turn is not None

    def ended(_: object) -> None:
        state.user_cancelled = False

    turn.add_done_callback(ended)


class Rooms(Protocol):
    """What steering needs of whatever schedules the room's fairies (`FairyRuntime`)."""

    async def room(self, room_id: str) -> RoomFairies: ...

    def stop(self, room_id: str, fairy_id: str) -> bool:
        """A user's cancel of the fairy: False when it refuses (or is unknown)."""
        ...

    async def abort(self, room_id: str, project_id: str) -> None:
        """The system's abort: the project ends, its waits go, each fairy goes idle."""
        ...


class ProjectSteering:
    """Publishes each project's state as it changes and records who asked for it, so the room can
    abort or revert it."""

    def __init__(
        self,
        rooms: Rooms,
        records: RoomRecords,
        runs: ProjectRuns | None = None,
        publish: Callable[[str], PublishProject] | None = None,
    ) -> None:
        self._rooms = rooms
        self._records = records
        self._runs = runs
        self._publish = publish
        # (asker, session id of the prompt's run) per project id.
        self._origins: dict[str, tuple[str | None, str | None]] = {}

    # -- what the runtime's records tell it ------------------------------------------------
    async def board_saved(self, room: RoomFairies, changed: list[Project | Task]) -> None:
        touched: dict[str, None] = {}
        for obj in changed:
            pid = obj.id if isinstance(obj, Project) else obj.project_id
            if pid is not None:
                touched[pid] = None
        if not touched:  # only deletions (their project is gone from the task): every active
            touched = {p.id: None for p in room.board.projects.values() if p.status == "active"}
        for pid in touched:
            project = room.board.projects.get(pid)
            if project is not None:
                await self._origin(room, project)
                await self.publish(room, project)

    async def waits_saved(self, room: RoomFairies) -> None:
        for project in list(room.board.projects.values()):
            if project.status == "active":
                await self.publish(room, project)

    async def _origin(self, room: RoomFairies, project: Project) -> tuple[str | None, str | None]:
        origin = self._origins.get(project.id)
        if origin is not None:
            return origin
        record = await self._runs.record(project.id) if self._runs is not None else None
        if record is not None and (record.asker or record.session_id):
            origin = (record.asker, record.session_id)
        else:  # new: its lead works for the asker, in the prompt's run it was lent
            lead = room.fairy(project.orchestrator)
            lent = lead.lent or lead.session
            origin = (lead.asker, lent.session_id if lent is not None else None)
            if self._runs is not None and record is not None:
                await self._runs.set_origin(project.id, asker=origin[0], session_id=origin[1])
        self._origins[project.id] = origin
        return origin

    def asker(self, project_id: str) -> str | None:
        origin = self._origins.get(project_id)
        return None if origin is None else origin[0]

    async def publish(self, room: RoomFairies, project: Project) -> None:
        if self._publish is None:
            return
        asker, session_id = await self._origin(room, project)
        state = project_state(
            room.board, project, room.waits.conditions, asker=asker, session_id=session_id
        )
        try:
            await self._publish(room.room_id)(state)
        except Exception:  # a card a moment late is no reason to fail the fairy's turn
            log.exception("project_state_not_published", room=room.room_id, project=project.id)

    # -- steering ----------------------------------------------------------------------------
    async def abort_project(self, room_id: str, project_id: str, by: str) -> str | None:
        room = await self._rooms.room(room_id)
        project = room.board.projects.get(project_id)
        if project is None:
            return "no project with that id in this room"
        if project.status != "active":
            return f"that project is {project.status} already"
        fairies = (project.orchestrator, *project.members)
        lead = room.fairy(project.orchestrator)
        said_in = lead.lent or lead.session
        # Nothing queued for them runs after the abort, and a turn cancelled by it ends as a
        # user's cancel: what it had half drawn is withdrawn.
        for fid in fairies:
            state = room.fairy(fid)
            for req in state.queue:
                await self._records.set_request(req, "canceled")
            state.queue.clear()
            if state.turn is not None:
                _cancelled_by_user(state)
        await self._rooms.abort(room_id, project_id)  # board, waits, each fairy interrupted
        turns = [t for fid in fairies if (t := room.fairy(fid).turn) is not None]
        if turns:
            await asyncio.wait(turns, timeout=STOP_S)
        tasks = room.board.project_tasks(project_id)
        done = sum(1 for t in tasks if t.status == "done")
        who = "" if by == "steward" else f" by {by}"
        text = (
            f'Project "{project.title}" was aborted{who}: {done} of {len(tasks)} task'
            f"{'s' if len(tasks) != 1 else ''} done; nothing half-drawn was left."
        )
        if said_in is not None:
            try:
                await said_in.send_chat(text)
            except Exception:
                log.exception("project_abort_not_said", room=room_id, project=project_id)
        log.info(
            "project_aborted_by_user",
            room=room_id,
            project=project_id,
            by=by,
            tasks=len(tasks),
            done=done,
        )
        return None
