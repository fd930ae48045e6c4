"""Taking back a run as a whole: RPC `steward.revert` and the revert's own run.

Whoever may cancel a run may revert it (`Intake.cancel_refusal`, the same check and log
line). A run still going is cancelled first and waited for. The inverse is computed from the
room's history in the outbox (`steward.canvas.inverse`), so it holds after a restart, and
goes out as a run of its own, opened and closed in the room's one registry of runs
(`RoomSessions`, kind revert) and sent through the broadcaster like any: sequenced, persisted
in the outbox, acked, replayed to late joiners. Shapes changed since the run touched them are left
as they are and named in the run's chat reply; a revert's run can itself be reverted, which
redoes what it took back.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from livekit import rtc

from steward.canvas.apply import Shape
from steward.canvas.inverse import HistoryEnvelope, RunInverse, run_inverse
from steward.obs.logging import get_logger
from steward.protocol import ProtocolError, decode
from steward.protocol.limits import MAX_RPC_PAYLOAD_BYTES
from steward.protocol.messages import (
    FINAL_STATUSES,
    ActionEnvelope,
    PromptReply,
    RevertReply,
    RevertRequest,
)
from steward.protocol.names import RPC_REVERT
from steward.room.inbound.intake import Intake, RateLimiter
from steward.room.inbound.undo_words import Command, asked_runs, targets
from steward.room.outbound.broadcaster import Broadcaster
from steward.room.outbound.envelopes import FragmentAssembler, is_fragment
from steward.room.outbound.messenger import Messenger
from steward.room.outbound.relay import relay_session_id
from steward.room.runs.sessions import RoomSessions
from steward.store.outbox import Outbox, OutboxRow, SessionRecord

log = get_logger(__name__)

# How long a revert waits for the run it cancelled to stop.
STOP_WAIT_S = 10.0
_POLL_S = 0.05
# Shapes named in the chat reply (the RPC reply lists them all).
NAMED_IN_CHAT = 20
NOTHING_CHANGED = "that run changed nothing on the canvas"
# Reverts a participant may ask for a minute.
REVERTS_PER_MIN = 20


def history_envelopes(rows: list[OutboxRow]) -> list[HistoryEnvelope]:
    """The room's outbox rows (in room order) as envelopes with whole actions: fragments
    are reassembled into the envelope that completes them, as the browsers do."""
    assembler = FragmentAssembler()
    out: list[HistoryEnvelope] = []
    for row in rows:
        env = ActionEnvelope.model_validate_json(row.payload)
        actions = []
        for action in env.actions:
            if is_fragment(action.params):
                params = assembler.add(action.id, action.params)
                if params is None:
                    continue
                action = action.model_copy(update={"params": params})
            actions.append(action)
        out.append(HistoryEnvelope(env.session_id, bool(env.partial), actions))
    return out


def describe(shape_id: str, record: Shape | None) -> str:
    """A shape as a person finds it in the chat: its id, kind and a few words of its text."""
    if record is None:
        return shape_id
    text = record.get("props", {}).get("text")
    words = f' "{text[:30]}"' if isinstance(text, str) and text.strip() else ""
    return f"{shape_id} ({record.get('type', 'shape')}{words})"


def reply_text(inverse: RunInverse, what: str, shapes: dict[str, Shape]) -> str:
    """The revert's chat reply; `what` names what it took back ("run s-…", "project …")."""
    changes = len(inverse.restored) + len(inverse.removed)
    if changes:
        said = f"Took back {what}: {changes} shape change{'s' if changes != 1 else ''}."
    else:
        said = f"Nothing of {what} to take back."
    if inverse.left:
        named = ", ".join(describe(sid, shapes.get(sid)) for sid in inverse.left[:NAMED_IN_CHAT])
        more = len(inverse.left) - NAMED_IN_CHAT
        said += f" Left as they are, changed since the run: {named}"
        said += f" and {more} more." if more > 0 else "."
    return said


# (prompt's run, caller, words said, what the reply calls it) -> the project's revert, or None.
ProjectOfPrompt = Callable[[str, str, str, str | None], Awaitable[RevertReply | None]]


@dataclass
class RevertDeps:
    """What a revert needs of its room (wired by the room runtime)."""

    broadcaster: Broadcaster
    messenger: Messenger
    outbox: Outbox
    # The room's runs: their one cancel path (with its log line), whom each works for, and
    # where the revert's own run is opened and closed.
    sessions: RoomSessions
    intake: Intake
    # Set once the room's start has ended the runs a dead steward left running.
    startup: asyncio.Event | None = None


class Reverter:
    """Takes back a run (or a project's runs) as a revert run of its own, one at a time per room,
    rate-limited."""

    def __init__(self, room_id: str, deps: RevertDeps, *, per_min: int = REVERTS_PER_MIN) -> None:
        self.room_id = room_id
        self._deps = deps
        # One revert at a time per room: each reads the history the previous one wrote.
        self._lock = asyncio.Lock()
        self._limit = RateLimiter(per_min)
        # The revert of the project a prompt's run started (None: it started none), for an
        # "undo" of a project's prompt; set by the room runtime to its project steering.
        self.project_of_prompt: ProjectOfPrompt | None = None

    async def on_revert_rpc(self, inv: rtc.RpcInvocationData) -> str:
        caller = inv.caller_identity
        req = decode(RevertRequest, inv.payload, topic=RPC_REVERT, max_bytes=MAX_RPC_PAYLOAD_BYTES)
        if isinstance(req, ProtocolError):
            log.warning(
                "inbound_rejected",
                room=self.room_id,
                topic=RPC_REVERT,
                participant=caller,
                reason=req.kind,
                detail=str(req)[:300],
            )
            return RevertReply(error=f"invalid revert: {req}").to_wire().decode()
        return (await self.revert(req.session_id, caller)).to_wire().decode()

    async def by_word(self, caller: str, said: str, command: Command) -> PromptReply:
        """ "undo" or "redo" from `caller` (typed or spoken, `said`): takes back the caller's
        last run, or does again what their last undo took back, as the undo button does."""
        runs = asked_runs(self._deps.messenger.conversation.items())
        candidates = targets(runs, caller, command)
        if not candidates:
            why = "nothing of yours to undo" if command == "undo" else "no undo of yours to redo"
            log.info("session_revert_refused", room=self.room_id, by=caller, reason=why)
            return PromptReply(error=why)
        text = {r.session_id: r.text for r in runs}
        reply = RevertReply(error="nothing of yours to undo")
        for run in candidates:
            # An undo names the request it takes back; a redo, the request it does again.
            asked = text.get(run.reverts or "", "") if command == "redo" else run.text
            what = f'"{_quoted(asked)}"' if asked else None
            if command == "redo" and what is not None:
                what = f"the undo of {what}"
            if run.helped and self.project_of_prompt is not None:
                # A project's prompt: its fairies drew, not its run alone; the project goes.
                named = f"the project {what}" if what else None
                taken = await self.project_of_prompt(run.session_id, caller, said, named)
                if taken is not None:
                    return PromptReply(session_id=taken.session_id, error=taken.error)
            reply = await self.revert(run.session_id, caller, said=said, what=what)
            if reply.error != NOTHING_CHANGED or run.helped:
                break
            # A chat-only answer is passed over: the run before it is tried.
        return PromptReply(session_id=reply.session_id, error=reply.error)

    async def revert(
        self, reverted_id: str, caller: str, *, said: str | None = None, what: str | None = None
    ) -> RevertReply:
        """Take back run `reverted_id` for participant `caller`: the reply names the revert's run.
        `said`: the words that asked for it (shown as its prompt); `what`: the run as the
        chat reply names it (default its id)."""
        deps = self._deps
        if not self._limit.allow(caller):  # each revert reads the room's whole history
            return self._refused(
                reverted_id, caller, "rate limit: too many reverts, try again soon"
            )
        if reverted_id == relay_session_id(self.room_id):
            return self._refused(reverted_id, caller, "users' own edits are not a run to revert")
        record = await deps.outbox.session_record(reverted_id)
        room = record.room_id if record is not None else await deps.outbox.session_room(reverted_id)
        if room != self.room_id:
            return self._refused(reverted_id, caller, "no run with that id in this room")
        owner = self._owner(reverted_id, record)
        refusal = deps.intake.cancel_refusal(caller, reverted_id, owner, verb="revert")
        if refusal is not None:
            return RevertReply(error=refusal)
        return await self._take_back(
            reverted_id, [reverted_id], caller, what or self._named(reverted_id), said
        )

    def _named(self, session_id: str) -> str:
        """Run `session_id` as the chat names it (an undo button's revert names no run): by
        the words that asked for it, as the panel shows them, else by its id."""
        runs = {r.session_id: r for r in asked_runs(self._deps.messenger.conversation.items())}
        run = runs.get(session_id)
        if run is not None and run.reverts is not None:
            undone = runs.get(run.reverts)
            if undone is not None and undone.text:
                return f'the undo of "{_quoted(undone.text)}"'
        elif run is not None and run.text:
            return f'"{_quoted(run.text)}"'
        return f"run {session_id}"

    async def revert_project(
        self,
        project_id: str,
        runs: list[str],
        caller: str,
        *,
        said: str | None = None,
        what: str | None = None,
    ) -> RevertReply:
        """Take back every run of project `project_id` as one revert (its rights and its
        abort are checked and done by `steward.room.runs.steering`)."""
        if not self._limit.allow(caller):
            return self._refused(project_id, caller, "rate limit: too many reverts, try again soon")
        if not runs:
            return self._refused(project_id, caller, "that project changed nothing on the canvas")
        return await self._take_back(
            project_id, runs, caller, what or f"project {project_id}", said
        )

    async def _take_back(
        self, target: str, runs: list[str], caller: str, what: str, said: str | None = None
    ) -> RevertReply:
        deps = self._deps
        if deps.startup is not None:
            try:
                await asyncio.wait_for(deps.startup.wait(), STOP_WAIT_S)
            except TimeoutError:
                return self._refused(target, caller, "the room is still starting; try again")
        for reverted_id in runs:
            if not await self._stopped(reverted_id, caller):
                return self._refused(target, caller, "the run did not stop in time; try again")
        try:
            async with self._lock:
                return await self._send_inverse(target, runs, caller, what, said)
        except Exception as err:
            log.exception("revert_failed", room=self.room_id, session_id=target, by=caller)
            return RevertReply(error=f"could not revert: {type(err).__name__}")

    def _owner(self, reverted_id: str, record: SessionRecord | None) -> str | None:
        """Whom the run works for: as a cancel sees it while the run is open; after, the
        participant who asked (a fairy's session: whom its fairy works for), from Postgres."""
        owner = self._deps.sessions.owner(reverted_id)
        if owner is not None or record is None:
            return owner
        if record.fairy_id is not None:
            owner = self._deps.sessions.fairy_asker(record.fairy_id)
        return owner if owner is not None else record.requester

    def _refused(self, reverted_id: str, caller: str, reason: str) -> RevertReply:
        log.info(
            "session_revert_refused",
            room=self.room_id,
            session_id=reverted_id[:64],
            by=caller,
            reason=reason,
        )
        return RevertReply(error=reason)

    async def _stopped(self, reverted_id: str, caller: str) -> bool:
        """Cancels the run if it is still going, and waits (bounded) until it has ended and
        its in-flight previews are withdrawn."""
        deps = self._deps
        sessions = deps.sessions
        ours = reverted_id in sessions.running()
        # A fairy's own run still open (whom it works for known), or a run with previews
        # still in flight.
        fairy = (
            sessions.fairy_of(reverted_id) is not None and sessions.owner(reverted_id) is not None
        )
        other = not ours and (fairy or bool(deps.broadcaster.mirror.in_flight(reverted_id)))
        if not ours and not other:
            return True
        started = time.monotonic()
        if not ours or not self._finishing(reverted_id):
            sessions.cancel(reverted_id, caller)
        if ours:
            # The run's task ends by itself once cancelled; waited for, never raised from.
            ended = asyncio.ensure_future(sessions.settled(reverted_id))
            await asyncio.wait([ended], timeout=STOP_WAIT_S)
            if not ended.done():
                ended.cancel()
                return False
        # A fairy's run withdraws its previews as its fairy stops: polled, as nothing tells.
        while time.monotonic() - started < STOP_WAIT_S:
            if not deps.broadcaster.mirror.in_flight(reverted_id):
                return True
            await asyncio.sleep(_POLL_S)
        return False

    def _finishing(self, reverted_id: str) -> bool:
        """Whether the run has sent its final status and is only writing its end down."""
        session = self._deps.sessions.sessions.get(reverted_id)
        statuses = session.figures.statuses if session is not None else []
        return bool(statuses) and statuses[-1] in FINAL_STATUSES

    async def _send_inverse(
        self, reverted_id: str, runs: list[str], caller: str, what: str, said: str | None
    ) -> RevertReply:
        """Sends the inverse of `runs` as one revert run naming `reverted_id` (a run's id, or a
        project's when `runs` are its runs); `said`: the words that asked, its prompt."""
        deps = self._deps
        broadcaster = deps.broadcaster
        for run in runs:  # whatever is queued reaches the outbox first
            await broadcaster.last_seq(run)
        rows = await deps.outbox.room_history(self.room_id)
        mirror = broadcaster.mirror
        inverse = run_inverse(history_envelopes(rows), runs, current=mirror.shapes)
        if not inverse.found:
            kind = "run" if runs == [reverted_id] else "project"
            return self._refused(reverted_id, caller, f"that {kind} changed nothing on the canvas")
        shapes_then = dict(mirror.shapes)
        session = await deps.sessions.open_revert(reverted_id, caller)
        session_id = session.session_id
        figures: dict[str, object] = {
            "reverts": reverted_id,
            "restored": len(inverse.restored),
            "removed": len(inverse.removed),
            "left": len(inverse.left),
            "reverted_actions": len(inverse.actions),
        }
        outcome = "error: unknown"
        try:
            await self._announce(session_id, reverted_id, caller, said or f"Undo {what}")
            await session.send_status("streaming")
            if inverse.actions:
                await broadcaster.send(session_id, inverse.actions)
            await session.send_chat(reply_text(inverse, what, shapes_then))
            outcome = "done"
        except asyncio.CancelledError:
            outcome = "canceled"
            raise
        except Exception as err:  # `revert` logs it and replies with the error
            outcome = f"error: {type(err).__name__}"
            raise
        finally:
            await deps.sessions.close_revert(session, outcome, figures)
        log.info(
            "session_reverted",
            room=self.room_id,
            session_id=reverted_id,
            revert_session_id=session_id,
            by=caller,
            restored=len(inverse.restored),
            removed=len(inverse.removed),
            left=len(inverse.left),
            actions=len(inverse.actions),
        )
        return RevertReply(session_id=session_id, left=inverse.left)

    async def _announce(self, session_id: str, reverted_id: str, caller: str, said: str) -> None:
        await self._deps.messenger.prompt(
            session_id,
            said,
            asker=caller,
            source="browser",
            reverts=reverted_id,
        )


def _quoted(text: str, limit: int = 60) -> str:
    """A request's words, short enough to quote in one chat line."""
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= limit else one_line[: limit - 1] + "…"
