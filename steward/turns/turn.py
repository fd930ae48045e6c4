"""The one turn core every kind of request runs: stream → parse → sanitize → resolve → bounds
guard → send.

A `Turn` is one model request of one session. `TurnDriver.drive` streams the model into it:
each parsed (partial or complete) action is sanitized and resolved against the room's
canvas (`session.canvas`) by the action registry, checked against the role's task bounds,
and sent; an action whose spec has an effect beyond the canvas (`ActionSpec.effect`, the
fairy actions) goes to the role's `TurnHooks.effect`, which runs that effect. The roles
differ only by their hooks and the actions their mode enables.

One wire-id scheme: `{session}.{request}.{index}[.k]` (k > 0 for the extra ops of one
action), so partial versions of an action keep one id. One way to withdraw a half-streamed
action: a final `think` under the id of the in-flight partial; every receiver undoes the
partial before applying it (taking back a whole run is a revert: `room/runs/revert.py`).

A turn ended by an action (await-tasks-completion, mark-my-task-done, end-project, a fairy
mistake) still reads its stream to the end, bounded in time and size: the provider learns the
output token count only at the end of a reply, so a dropped stream would under-count usage and
cost. Nothing read after the end is applied; what it held is logged as ignored (names only).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from steward.actions.base import ActionSpec, RunState, WireOp
from steward.actions.ordering import CreateOrder
from steward.actions.registry import ACTIONS, Outcome, normalize_name, process
from steward.canvas.mirror import withdrawals
from steward.canvas.quality import RunShapes
from steward.model.base import ModelError, ModelProvider, ModelRequest, Usage
from steward.model.parser import ActionStreamParser, ParsedAction
from steward.obs import metrics
from steward.obs.logging import get_logger
from steward.ports import SessionPort
from steward.protocol.messages import WireAction
from steward.turns.bounds_guard import BoundsGuard

log = get_logger(__name__)

# Said to the user when a whole response yielded no action at all.
NO_ACTION_NOTICE = (
    "I could not turn my answer into any action, so nothing changed. "
    "Please try again, perhaps in other words."
)

TurnEnd = Literal["done", "canceled", "ended"]

# Reading the rest of a stream after an action ended the turn stops after this long or this
# many characters (a reply of max_tokens is about 4 characters a token).
TAIL_TIMEOUT_S = 30.0
TAIL_MAX_CHARS = 256_000


def _no_refusal(name: str) -> str:
    return f'The action "{name}" is not available here.'


@dataclass
class TurnHooks:
    """What a role adds to the shared turn; every hook is optional but `actions`."""

    # The actions the role may use now (its mode may change mid-turn).
    actions: Callable[[], Mapping[str, ActionSpec]]
    # Feedback for the model when it used a known action its mode does not allow.
    refusal: Callable[[str], str] = _no_refusal
    # Runs a complete action's `spec.effect` (fairy actions); True ends the turn.
    effect: Callable[[Outcome], Awaitable[bool]] | None = None
    # Every complete action that was handled (history, counters).
    applied: Callable[[Outcome], Awaitable[None]] | None = None
    # The final text of each assistant message (kept in the role's history).
    said: Callable[[str], None] | None = None
    # A working fairy's task area: its wire actions are clamped or refused outside it.
    guard: BoundsGuard | None = None
    # Measurement hook (`steward bench latency`): mark(kind, key).
    mark: Callable[[str, str], None] | None = None


@dataclass
class Turn:
    """State of one model request in one session."""

    session: SessionPort
    ctx: RunState
    request_no: int
    hooks: TurnHooks
    inflight: dict[int, str] = field(default_factory=dict)  # action index → partial wire id
    last_partial: dict[int, dict[str, Any]] = field(default_factory=dict)
    last_chat: dict[int, str] = field(default_factory=dict)
    chat_final: set[int] = field(default_factory=set)
    actions_done: int = 0  # complete actions handled (sent, said or with an effect)
    ops_sent: int = 0
    refusals: list[str] = field(default_factory=list)
    drawn: RunShapes = field(default_factory=RunShapes)  # for the run's lints (run_feedback)
    # Names of complete actions that came after an action ended the turn (never applied).
    ignored: list[str] = field(default_factory=list)
    progress: Callable[[], None] = lambda: None  # the watchdog's: output arrived
    order: CreateOrder = field(init=False)

    def __post_init__(self) -> None:
        self.order = CreateOrder(exists=lambda sid: self.ctx.existing_id(sid) is not None)

    def wire_id(self, index: int, k: int = 0) -> str:
        base = f"{self.session.session_id}.{self.request_no}.{index}"
        return base if k == 0 else f"{base}.{k}"


def record_outcome(room: str, session: str, name: str, refused: str | None = None) -> None:
    """Count one complete model action as applied, or as refused with the reason logged.
    The turn core records every action but fairy actions, whose effect records them."""
    metrics.MODEL_ACTIONS.labels("applied" if refused is None else "refused").inc()
    if refused is not None:
        log.info(
            "action_refused",
            room=room,
            session=session,
            action=name[:40],
            reason=refused[:200] or "refused",
        )


def withdrawal(wire_id: str, why: str = "reverted") -> WireAction:
    """The final version that undoes an in-flight partial everywhere."""
    (final,) = withdrawals([wire_id], why)
    return final


class TurnDriver:
    """Streams one model request into a `Turn`."""

    async def drive(
        self, turn: Turn, model: ModelProvider, request: ModelRequest, usage: Usage
    ) -> TurnEnd:
        end = await self._stream(turn, model, request, usage)
        # Ops go out without waiting (one flush per loop turn carries them): the turn ends
        # when all of them are persisted and handed to LiveKit.
        await turn.session.flush_actions()
        return end

    async def _stream(
        self, turn: Turn, model: ModelProvider, request: ModelRequest, usage: Usage
    ) -> TurnEnd:
        session = turn.session
        parser = ActionStreamParser()
        parser.feed(request.prefill)  # the provider continues after the prefilled opening
        await session.send_status("calling_model")
        if turn.hooks.mark is not None:
            turn.hooks.mark("model_request", session.session_id)
        first = True
        stream = model.stream(request, usage)
        async for chunk in stream:
            turn.progress()
            if session.cancelled():
                await self.withdraw_in_flight(turn, "canceled")
                return "canceled"
            if first:
                await session.send_status("streaming")
                first = False
            events = parser.feed(chunk)
            turn.ctx.notes.extend(parser.take_notes())  # entries skipped: the model is told
            if await self.handle(turn, events):
                await self.withdraw_in_flight(turn, "the turn ended")
                await self.finish_chats(turn)
                await self.read_tail(turn, stream, parser)
                return "ended"
        # The parser's end reports only a cut-off action; then whatever was held.
        events = parser.finish()
        turn.ctx.notes.extend(parser.take_notes())
        ended = await self.handle(turn, events)
        for ev in [] if ended else turn.order.finish():
            if await self._one(turn, ev):
                ended = True
                break
        await self.withdraw_in_flight(turn, "cut off")
        await self.finish_chats(turn)
        if turn.actions_done == 0 and not ended:
            await session.send_chat(NO_ACTION_NOTICE, role="system")
            log.info(
                "turn_no_action",
                room=session.room_id,
                session=session.session_id,
                request=turn.request_no,
                notes=turn.ctx.notes[:5],
            )
        return "ended" if ended else "done"

    async def handle(self, turn: Turn, events: list[ParsedAction]) -> bool:
        """Handle one parser batch; True when an action ended the turn."""
        mark = turn.hooks.mark
        for i, event in enumerate(events):
            if mark is not None and event.complete:
                mark("action_complete", turn.wire_id(event.index))
            # One at a time, creates before what names them (see CreateOrder).
            released = turn.order.push(event)
            for k, ev in enumerate(released):
                if await self._one(turn, ev):
                    rest = [*released[k + 1 :], *events[i + 1 :]]
                    self._ignore(turn, [*rest, *turn.order.finish()])
                    return True
        return False

    @staticmethod
    def _ignore(turn: Turn, events: list[ParsedAction]) -> None:
        for ev in events:
            if ev.complete:
                turn.ignored.append(str(normalize_name(ev.data.get("_type")) or "?")[:40])

    async def read_tail(
        self, turn: Turn, stream: AsyncIterator[str], parser: ActionStreamParser
    ) -> None:
        """Read what the model sent after the action that ended the turn, apply none of it,
        and log it as ignored: the stream's end carries the reply's output token count."""
        chars, cut = 0, ""
        try:
            async with asyncio.timeout(TAIL_TIMEOUT_S):
                async for chunk in stream:
                    if turn.session.cancelled():
                        cut = "canceled"
                        break
                    turn.progress()
                    chars += len(chunk)
                    self._ignore(turn, parser.feed(chunk))
                    if chars > TAIL_MAX_CHARS:
                        cut = "size"
                        break
        except TimeoutError:
            cut = "time"
        except ModelError as err:
            cut = "error"
            log.info("turn_tail_failed", session=turn.session.session_id, reason=str(err)[:200])
        finally:
            closing = getattr(stream, "aclose", None)
            if closing is not None:
                await closing()
        self._ignore(turn, parser.finish())  # a cut-off action is not complete: not counted
        if turn.ignored or chars:
            log.info(
                "turn_tail_ignored",
                room=turn.session.room_id,
                session=turn.session.session_id,
                request=turn.request_no,
                actions=len(turn.ignored),
                names=turn.ignored[:20],
                chars=chars,
                cut=cut or None,
            )

    async def _one(self, turn: Turn, ev: ParsedAction) -> bool:
        enabled = turn.hooks.actions()
        if ev.truncated:
            # A cut stream: a message keeps what it said (finish_chats); the rest reverts.
            out = process(
                ev.data,
                index=ev.index,
                complete=False,
                incomplete_path=ev.incomplete_path,
                ctx=turn.ctx,
                enabled=enabled,
            )
            if out is not None and out.chat:
                turn.last_chat[ev.index] = out.chat
            elif ev.index not in turn.last_chat:
                await self.withdraw_one(turn, ev.index, "cut off")
                turn.ctx.notes.append(f"action {ev.index} was cut off")
            return False
        name = normalize_name(ev.data.get("_type"))
        if name is not None and name not in enabled and name in ACTIONS:
            if ev.complete:
                turn.refusals.append(turn.hooks.refusal(name))
                self._outcome(turn, name, turn.refusals[-1])
                await self.withdraw_one(turn, ev.index, "not allowed")
            return False
        notes = len(turn.ctx.notes)
        out = process(
            ev.data,
            index=ev.index,
            complete=ev.complete,
            incomplete_path=ev.incomplete_path,
            ctx=turn.ctx,
            enabled=enabled,
        )
        if out is None:
            if ev.complete:
                why = "; ".join(turn.ctx.notes[notes:]) or "not usable as sent"
                self._outcome(turn, str(name or ev.data.get("_type")), why)
                await self.withdraw_one(turn, ev.index, "refused")
            return False
        if out.spec is not None and out.spec.effect is not None:
            if not out.complete:
                return False
            if turn.hooks.effect is None:
                self._outcome(turn, out.name, "no fairy actions in this role")
                return False
            turn.actions_done += 1
            ended = await turn.hooks.effect(out)
            if turn.hooks.applied is not None:
                await turn.hooks.applied(out)
            return ended
        await self._chat(turn, out)
        refused = await self._ops(turn, out)
        if out.complete:
            self._outcome(turn, out.name, refused)
            turn.actions_done += 1
            if turn.hooks.applied is not None:
                await turn.hooks.applied(out)
        return False

    @staticmethod
    def _outcome(turn: Turn, name: str, refused: str | None) -> None:
        record_outcome(turn.session.room_id, turn.session.session_id, name, refused)

    async def _chat(self, turn: Turn, out: Outcome) -> None:
        if out.chat is None:
            return
        if out.complete:
            turn.last_chat[out.index] = out.chat
            await self._final_chat(turn, out.index)
        elif out.chat and out.chat != turn.last_chat.get(out.index):
            turn.last_chat[out.index] = out.chat
            await turn.session.send_chat(out.chat, partial=True, message_id=turn.wire_id(out.index))

    async def _final_chat(self, turn: Turn, index: int) -> None:
        if index in turn.chat_final:
            return
        turn.chat_final.add(index)
        text = turn.last_chat[index]
        await turn.session.send_chat(text, partial=False, message_id=turn.wire_id(index))
        if turn.hooks.said is not None:
            turn.hooks.said(text)

    async def finish_chats(self, turn: Turn) -> None:
        """Every message ends final: one cut off keeps the text it had (and counts)."""
        for index in list(turn.last_chat):
            if index not in turn.chat_final:
                turn.actions_done += 1
                await self._final_chat(turn, index)

    async def _ops(self, turn: Turn, out: Outcome) -> str | None:
        """Send the outcome's ops; for a complete action whose every op the bounds guard
        refused, returns why."""
        if not out.ops:
            if out.complete:
                await self.withdraw_one(turn, out.index, "nothing to do")
            return None
        if not out.complete:
            if len(out.ops) != 1:
                return None  # only single-op actions stream; the rest wait for completion
            actions = self._guarded(turn, [self._wire(turn, out.index, 0, out.ops[0])], False)
            if not actions:
                return None
            (action,) = actions
            if turn.last_partial.get(out.index) == action.params:
                return None  # nothing visible changed since the last partial version
            turn.last_partial[out.index] = action.params
            turn.inflight[out.index] = action.id
            await turn.session.send_actions([action], partial=True, wait=False)
            return None
        wire = [self._wire(turn, out.index, k, op) for k, op in enumerate(out.ops)]
        seen = len(turn.refusals)
        actions = self._guarded(turn, wire, True)
        refused = None if actions else " ".join(turn.refusals[seen:]) or "outside the bounds"
        partial_id = turn.inflight.pop(out.index, None)
        if partial_id is not None and partial_id not in {a.id for a in actions}:
            actions.append(withdrawal(partial_id, "refused"))
        if actions:
            turn.ops_sent += len(actions)
            for a in actions:
                turn.drawn.note(a.name, a.params)
            await turn.session.send_actions(actions, wait=False)
        return refused

    def _guarded(self, turn: Turn, wire: list[WireAction], complete: bool) -> list[WireAction]:
        guard = turn.hooks.guard
        if guard is None:
            return wire
        verdict = guard.check(wire, turn.session.canvas.shapes)
        if complete:
            turn.refusals.extend(why for _, why in verdict.refused)
        return verdict.actions

    @staticmethod
    def _wire(turn: Turn, index: int, k: int, op: WireOp) -> WireAction:
        return WireAction(id=turn.wire_id(index, k), name=op.name, params=op.params)

    async def withdraw_one(self, turn: Turn, index: int, why: str = "reverted") -> None:
        wire_id = turn.inflight.pop(index, None)
        if wire_id is not None:
            await turn.session.send_actions([withdrawal(wire_id, why)])

    async def withdraw_in_flight(self, turn: Turn, why: str = "reverted") -> None:
        for index in list(turn.inflight):
            await self.withdraw_one(turn, index, why)


# -- the follow-up loop ------------------------------------------------------------------


async def shielded_withdraw(driver: TurnDriver, turn: Turn | None, why: str) -> None:
    """Withdraw a cancelled turn's partials even while its task is being cancelled."""
    if turn is not None:
        await asyncio.shield(driver.withdraw_in_flight(turn, why))
