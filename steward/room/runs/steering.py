"""Steering a project: RPC `steward.abort` (end it now) and `steward.revert_project` (take
back all its runs as one revert).

Either is allowed to whoever asked for the project, or a moderator (the same check, and log
line, as a cancel: `Intake.cancel_refusal`); the project must be this room's. An abort is the
fairy runtime's to carry out (`ProjectDesk`): its drones stop as on a cancel, what they had
half drawn is withdrawn, and the lead ends the project and says so. Undoing an active
project aborts it first, then reverts every run it had (`Reverter.revert_project`).
"""

from __future__ import annotations

from typing import Protocol

from livekit import rtc

from steward.obs.logging import get_logger
from steward.protocol import ProtocolError, decode
from steward.protocol.limits import MAX_RPC_PAYLOAD_BYTES
from steward.protocol.messages import (
    AbortReply,
    AbortRequest,
    ProjectRevertRequest,
    RevertReply,
)
from steward.protocol.names import RPC_ABORT, RPC_REVERT_PROJECT
from steward.room.inbound.intake import Intake
from steward.room.runs.revert import Reverter
from steward.store.project_runs import ProjectRecord, ProjectRuns

log = get_logger(__name__)


class ProjectDesk(Protocol):
    """What steering needs of the fairy runtime (which implements it)."""

    async def abort_project(self, room_id: str, project_id: str, by: str) -> str | None:
        """End the active project now, its fairies stopped as on a cancel and nothing half
        drawn left; returns why not (it is not active, or unknown), or None once ended."""
        ...


class Steering:
    """Answers RPCs `steward.abort` and `steward.revert_project` for the room's projects."""

    def __init__(
        self,
        room_id: str,
        intake: Intake,
        reverter: Reverter,
        projects: ProjectRuns | None,
        desk: ProjectDesk | None,
    ) -> None:
        self.room_id = room_id
        self._intake = intake
        self._reverter = reverter
        self._projects = projects
        self._desk = desk

    def _bad(self, method: str, caller: str, err: ProtocolError) -> None:
        log.warning(
            "inbound_rejected",
            room=self.room_id,
            topic=method,
            participant=caller,
            reason=err.kind,
            detail=str(err)[:300],
        )

    async def on_abort_rpc(self, inv: rtc.RpcInvocationData) -> str:
        caller = inv.caller_identity
        req = decode(AbortRequest, inv.payload, topic=RPC_ABORT, max_bytes=MAX_RPC_PAYLOAD_BYTES)
        if isinstance(req, ProtocolError):
            self._bad(RPC_ABORT, caller, req)
            return AbortReply(ok=False, error=f"invalid abort: {req}").to_wire().decode()
        error = await self.abort(req.project_id, caller)
        return AbortReply(ok=error is None, error=error).to_wire().decode()

    async def on_revert_project_rpc(self, inv: rtc.RpcInvocationData) -> str:
        caller = inv.caller_identity
        req = decode(
            ProjectRevertRequest,
            inv.payload,
            topic=RPC_REVERT_PROJECT,
            max_bytes=MAX_RPC_PAYLOAD_BYTES,
        )
        if isinstance(req, ProtocolError):
            self._bad(RPC_REVERT_PROJECT, caller, req)
            return RevertReply(error=f"invalid revert: {req}").to_wire().decode()
        return (await self.revert(req.project_id, caller)).to_wire().decode()

    async def _project(self, project_id: str, caller: str, verb: str) -> ProjectRecord | str:
        """The room's project `project_id` if `caller` may `verb` it, else why not."""
        if self._projects is None or self._desk is None:
            return "this steward runs no fairies"
        record = await self._projects.record(project_id)
        if record is None or record.room_id != self.room_id:
            log.info(
                f"project_{verb}_refused",
                room=self.room_id,
                project_id=project_id[:64],
                by=caller,
                reason="unknown",
            )
            return "no project with that id in this room"
        refusal = self._intake.cancel_refusal(
            caller, project_id, record.asker, verb=verb, what="project"
        )
        return record if refusal is None else refusal

    async def abort(self, project_id: str, caller: str) -> str | None:
        """Why `caller` could not abort the project, or None once it is ended."""
        record = await self._project(project_id, caller, "abort")
        if isinstance(record, str):
            return record
        if record.status != "active":
            return f"that project is {record.status} already"
        assert self._desk is not None
        error = await self._desk.abort_project(self.room_id, project_id, caller)
        log.info(
            "project_aborted" if error is None else "project_abort_failed",
            room=self.room_id,
            project_id=project_id,
            by=caller,
            error=error,
        )
        return error

    async def revert_started_by(
        self, session_id: str, caller: str, said: str, what: str | None
    ) -> RevertReply | None:
        """The revert of the project prompt run `session_id` started (the words `said`,
        "undo", on a project's prompt; `what` names it in the reply), or None when it
        started none."""
        if self._projects is None:
            return None
        project_id = await self._projects.started_by(self.room_id, session_id)
        if project_id is None:
            return None
        return await self.revert(project_id, caller, said=said, what=what)

    async def revert(
        self, project_id: str, caller: str, *, said: str | None = None, what: str | None = None
    ) -> RevertReply:
        record = await self._project(project_id, caller, "revert")
        if isinstance(record, str):
            return RevertReply(error=record)
        if record.status == "active":
            assert self._desk is not None
            error = await self._desk.abort_project(self.room_id, project_id, caller)
            if error is not None:
                return RevertReply(error=f"could not stop the project first: {error}")
        assert self._projects is not None
        runs = await self._projects.runs(self.room_id, project_id)
        if what is None and record.title:  # the card's "undo project": named as people saw it
            what = f'the project "{record.title}"'
        return await self._reverter.revert_project(project_id, runs, caller, said=said, what=what)
