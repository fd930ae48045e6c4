"""Changing the room's crew: RPCs `steward.summon`, `steward.rename` and `steward.dismiss`.

Who may change it is the room's rule (`STEWARD_CREW_POLICY`): `prompters` (default), anyone
allowed to prompt; `moderators`, only a moderator grant (`pm`). Both read the sender's
signed grant through `Intake` (bound to its participant session by `GrantBook`), so a grant
cannot be forged, replayed from another connection, or carried to another room; the sender
is the RPC's caller identity, never a payload field. The change is stored first
(`CrewStore`, under a room lock, its rules refusing an unknown fairy, a full crew or a name
already taken), then the fairy runtime is told (`CrewDesk`): it rebuilds its roster, says so
on `agent:fairies`, and ends a dismissed fairy's work as a cancel.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Literal, Protocol, TypeVar

from livekit import rtc

from steward.obs.logging import get_logger
from steward.protocol import ProtocolError, decode
from steward.protocol.limits import MAX_RPC_PAYLOAD_BYTES
from steward.protocol.messages import (
    CrewMember,
    CrewReply,
    DismissRequest,
    RenameRequest,
    SummonRequest,
    WireModel,
)
from steward.protocol.names import RPC_DISMISS, RPC_RENAME, RPC_SUMMON
from steward.room.inbound.intake import Intake, RateLimiter
from steward.room.participants import Participants
from steward.store.crew import CrewMate, CrewRefused, CrewStore

log = get_logger(__name__)

CrewPolicy = Literal["prompters", "moderators"]
# Crew changes a participant may make a minute.
CHANGES_PER_MIN = 20
_M = TypeVar("_M", bound=WireModel)


class CrewDesk(Protocol):
    """What the crew's changes need of the fairy runtime (which implements it; the room
    never imports the fairies)."""

    def default_crew(self, room_id: str) -> list[CrewMate]:
        """The crew of a room that never chose (written down at its first change)."""
        ...

    async def crew_changed(self, room_id: str, crew: list[CrewMate], dismissed: str | None) -> None:
        """The room's crew is now `crew` (dismissed fairies included, flagged); `dismissed`
        names the fairy just dismissed, whose work ends as a cancel."""
        ...


def member(mate: CrewMate) -> CrewMember:
    return CrewMember(
        id=mate.fairy_id,
        name=mate.name,
        personality=mate.personality,
        color=mate.color,
        role=mate.role,
    )


class CrewChanges:
    """Answers the crew RPCs (summon, rename, dismiss) under the room's crew policy."""

    def __init__(
        self,
        room_id: str,
        participants: Participants,
        intake: Intake,
        store: CrewStore | None,
        desk: CrewDesk | None,
        *,
        policy: CrewPolicy = "prompters",
        limit: int = 6,
    ) -> None:
        self.room_id = room_id
        self._participants = participants
        self._intake = intake
        self._store = store
        self._desk = desk
        self.policy = policy
        self.limit = limit
        self._limiter = RateLimiter(CHANGES_PER_MIN)

    def refusal(self, caller: str) -> str | None:
        """Why `caller` may not change the crew (logged), or None."""
        who = self._participants.get(caller)
        reason: str | None = None
        if who is None or not self._intake.may_prompt(who):
            reason = "not allowed to change this room's crew"
        elif self.policy == "moderators" and not self._intake.is_moderator(who):
            reason = "only a moderator may change this room's crew"
        elif not self._limiter.allow(caller):
            reason = "rate limit: too many crew changes, try again in a minute"
        if reason is not None:
            log.info("crew_change_refused", room=self.room_id, participant=caller, reason=reason)
        return reason

    async def on_summon_rpc(self, inv: rtc.RpcInvocationData) -> str:
        return await self._rpc(inv, RPC_SUMMON, SummonRequest, self.summon)

    async def on_rename_rpc(self, inv: rtc.RpcInvocationData) -> str:
        return await self._rpc(inv, RPC_RENAME, RenameRequest, self.rename)

    async def on_dismiss_rpc(self, inv: rtc.RpcInvocationData) -> str:
        return await self._rpc(inv, RPC_DISMISS, DismissRequest, self.dismiss)

    async def _rpc(
        self,
        inv: rtc.RpcInvocationData,
        method: str,
        model: type[_M],
        act: Callable[[str, _M], Awaitable[CrewReply]],
    ) -> str:
        caller = inv.caller_identity
        req = decode(model, inv.payload, topic=method, max_bytes=MAX_RPC_PAYLOAD_BYTES)
        if isinstance(req, ProtocolError):
            log.warning(
                "inbound_rejected",
                room=self.room_id,
                topic=method,
                participant=caller,
                reason=req.kind,
                detail=str(req)[:300],
            )
            return CrewReply(error=f"invalid request: {req}").to_wire().decode()
        return (await act(caller, req)).to_wire().decode()

    async def summon(self, caller: str, req: SummonRequest) -> CrewReply:
        async def change(store: CrewStore, default: list[CrewMate]) -> tuple[CrewMate, None]:
            mate = await store.summon(
                self.room_id,
                default,
                name=req.name,
                personality=req.personality,
                color=req.color,
                limit=self.limit,
                by=caller,
            )
            return mate, None

        return await self._change(caller, "summon", change)

    async def rename(self, caller: str, req: RenameRequest) -> CrewReply:
        async def change(store: CrewStore, default: list[CrewMate]) -> tuple[CrewMate, None]:
            return await store.rename(self.room_id, default, req.fairy_id, req.name), None

        return await self._change(caller, "rename", change)

    async def dismiss(self, caller: str, req: DismissRequest) -> CrewReply:
        async def change(store: CrewStore, default: list[CrewMate]) -> tuple[CrewMate, str]:
            gone, *_ = await store.dismiss(self.room_id, default, req.fairy_id, by=caller)
            return gone, gone.fairy_id

        return await self._change(caller, "dismiss", change)

    async def _change(
        self,
        caller: str,
        op: str,
        change: Callable[[CrewStore, list[CrewMate]], Awaitable[tuple[CrewMate, str | None]]],
    ) -> CrewReply:
        refusal = self.refusal(caller)
        if refusal is not None:
            return CrewReply(error=refusal)
        store, desk = self._store, self._desk
        if store is None or desk is None:
            return CrewReply(error="this steward runs no fairies")
        try:
            mate, dismissed = await change(store, desk.default_crew(self.room_id))
        except CrewRefused as err:
            log.info("crew_change_refused", room=self.room_id, participant=caller, reason=str(err))
            return CrewReply(error=str(err))
        except Exception as err:
            log.exception("crew_change_failed", room=self.room_id, participant=caller, op=op)
            return CrewReply(error=f"could not {op}: {type(err).__name__}")
        log.info("crew_changed", room=self.room_id, op=op, by=caller, fairy=mate.fairy_id)
        try:
            crew = await store.load(self.room_id) or []
            await desk.crew_changed(self.room_id, crew, dismissed)
        except Exception:  # stored: the fairies pick it up when the room next starts
            log.exception("crew_change_not_applied", room=self.room_id, op=op)
        return CrewReply(fairy=member(mate))
