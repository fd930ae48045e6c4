"""Resuming a room's fairies after a restart: what the dead process left half-streamed is
withdrawn, and work nobody would act on gets someone who does.

Open requests are re-run by the runtime's `resume`; a request that was running first gets
its dead session's in-flight partials ended (`withdraw_in_flight`). A crash can fall between
two writes of one step, so `restart_orphans` then restarts tasks in progress nobody works,
delivers wakes the dead process never queued, and tells an active project's lead when
nothing would wake it.
"""

from __future__ import annotations

from steward.actions.fairy.projects import drone_brief
from steward.fairies.deps import FairyDeps
from steward.fairies.interrupts import Interrupt
from steward.fairies.modes import WORKING_MODE
from steward.fairies.projects import completed_task_id
from steward.fairies.room_fairies import RoomFairies
from steward.fairies.room_records import RoomRecords
from steward.fairies.scheduler import Scheduler
from steward.obs.logging import get_logger
from steward.ports import SessionPort
from steward.protocol.messages import WireAction

log = get_logger(__name__)

REVERTED_AFTER_RESTART = "reverted after a restart"


async def restart_orphans(records: RoomRecords, scheduler: Scheduler, room: RoomFairies) -> int:
    """Work the dead process left where nobody acts on it gets someone to act.

    A crash can fall between two writes of one step: a task in progress whose fairy's
    request was never queued, a wait on a task that finished (or never started) whose
    wake was never queued, a lead whose tasks nobody works. Returns the requests queued."""
    queued = {fid for fid, f in room.fairies.items() if f.queue}
    before = sum(len(f.queue) for f in room.fairies.values())
    for task in list(room.board.tasks.values()):
        fid = task.assigned_to
        if task.status != "in-progress" or fid is None or fid in queued:
            continue
        project = room.board.projects.get(task.project_id or "")
        if project is not None and project.status != "active":
            continue
        if project is not None and fid != project.orchestrator:
            work = drone_brief(task, project.orchestrator)
        else:
            work = f'Work on your task "{task.id}": {task.text}'
        working = WORKING_MODE[room.roster.get(fid).role]
        log.info("fairy_task_restarted", room=room.room_id, fairy=fid, task=task.id)
        await scheduler.interrupt(room, fid, Interrupt("system", mode=working, input=work))
    for cond in list(room.waits.conditions):
        tid = completed_task_id(cond.key)
        if tid is None:
            continue  # a mode transition: its fairy is resumed above or idle
        status = t.status if (t := room.board.tasks.get(tid)) is not None else None
        if status == "in-progress":
            continue  # its fairy works it (resumed or restarted above) and will notify
        if status == "done":
            await scheduler.notify(room, cond.key)  # the wake the dead process never queued
            continue
        room.waits.notify(cond.key)
        await records.save_waits(room)
    for project in list(room.board.projects.values()):
        lead = project.orchestrator
        if project.status != "active" or room.fairy(lead).queue or room.waits.waiting_on(lead):
            continue
        await scheduler.submit(
            room,
            lead,
            "Your project was resumed after a restart and nothing is waking you. Tasks: "
            + room.board.task_list(project.id)
            + ". Direct a fairy to start each todo task, await the ones in progress, or end"
            " the project.",
            "system",
        )
    return sum(len(f.queue) for f in room.fairies.values()) - before


async def withdraw_in_flight(
    deps: FairyDeps, room: RoomFairies, fairy_id: str, session: SessionPort, dead_session: str
) -> None:
    """Undo what a dead process left half-streamed.

    Exact for every verb: the room reopens the dead session (its seq continued) and
    withdraws what it left in flight there, the one way every run's previews are withdrawn
    (`RoomSessions.withdraw_in_flight`); every receiver — browsers, the room's mirror, a client
    replaying the outbox later — keeps the undo of a partial under (session, action id), so
    it restores exactly what the partial changed. Without a factory that can reopen
    sessions, creates are deleted by id and other verbs get a no-op final in the current
    session (exact for creates only)."""
    assert deps.store is not None
    partials = await deps.store.in_flight_partials(dead_session)
    if not partials:
        return
    reopened: SessionPort | None = None
    if deps.sessions is not None:
        try:
            reopened = await deps.sessions.open_session(room.room_id, fairy_id, resume=dead_session)
        except Exception:
            log.exception("fairy_session_reopen_failed", room=room.room_id, fairy=fairy_id)
    if reopened is not None and deps.sessions is not None:
        await deps.sessions.close_session(reopened, "reverted")
    else:
        reverts: list[WireAction] = []
        for a in partials:
            params = a.get("params") or {}
            if a.get("name") == "create_shape" and isinstance(params.get("id"), str):
                reverts.append(
                    WireAction(id=a["id"], name="delete_shape", params={"ids": [params["id"]]})
                )
            else:
                reverts.append(
                    WireAction(id=a["id"], name="think", params={"text": REVERTED_AFTER_RESTART})
                )
        await session.send_actions(reverts)
    log.info("fairy_partials_reverted", room=room.room_id, count=len(partials))
