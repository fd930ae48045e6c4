"""The one-shot canvas agent: an `AgentRunner` that answers a one-shot prompt as its asker's
one-shotting fairy on the fairy runtime (`one_shot.py`: its history, todo list and run
feedback are that fairy's, durable like every fairy's), inside the session the room opened
for the prompt, with the prompt's guards (watchdog, budget, statuses).

For each request of the loop it asks the session for context, builds the prompt, streams the
model, parses actions incrementally, and for each (partial or complete) action sanitizes and
resolves it against the room's canvas (`session.canvas`) and sends the resulting wire ops,
which the room applies to that canvas. Partial versions keep one wire action id. On cancel,
watchdog or a model failure, in-flight partials are reverted: a final no-op (`think`) under
the same id, which every receiver answers by undoing the partial.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from steward.actions.base import RunState, Scheduled
from steward.actions.registry import ACTIONS, select
from steward.canvas.bounds import Rect
from steward.canvas.coords import CoordinateSpace
from steward.config import Settings, get_settings
from steward.fairies.budget import RoomBudget, UsageRecorder
from steward.fairies.look import Gaze, Look, shown
from steward.fairies.modes import MODES, ModeDefinition
from steward.fairies.one_shot import OneShotRecorder, one_shot_fairy, room_thread
from steward.fairies.orchestrator import FairyRuntime
from steward.fairies.request_loop import LoopDecision
from steward.fairies.room_fairies import FairyState, RoomFairies
from steward.fairies.run import AgentRun
from steward.fairies.turn import (
    TurnDriver,
    TurnEnd,
    TurnHooks,
    run_requests,
    shielded_revert,
)
from steward.model.base import ModelError, ModelProvider
from steward.model.registry import get_model
from steward.obs.logging import get_logger
from steward.ports import PromptInput, SessionPort
from steward.prompt.parts.chat_history import thread_for
from steward.prompt.registry import build_request
from steward.prompt.state import PromptState
from steward.protocol.messages import Box
from steward.watchdog import Watchdog

log = get_logger(__name__)


class BudgetExceeded(Exception):
    pass


@dataclass
class AgentConfig:
    """Constructor input of `CanvasAgent`."""

    settings: Settings = field(default_factory=get_settings)
    model: ModelProvider | None = None  # overrides settings/prompt model (tests)
    tokens_per_s: float | None = None  # scripted model rate override (0 = as fast as possible)
    mode: ModeDefinition = MODES["one-shotting"]
    usage: UsageRecorder | None = None
    clock: Callable[[], datetime] = lambda: datetime.now(UTC)
    # Measurement hook (`steward bench latency`): called as mark(kind, key) at the instant of
    # "model_request" (key: session id) and "action_complete" (key: the action's wire id
    # base). None costs one comparison per parser event.
    mark: Callable[[str, str], None] | None = None
    # The runtime the one-shotting fairies live on (the service's, with its store); None:
    # one of its own, in memory (tests, benchmarks).
    fairies: FairyRuntime | None = None


@dataclass(kw_only=True)
class _Run(AgentRun):
    """A one-shot run: the agents' run state, the prompt it answers, and its fairy."""

    prompt: PromptInput
    room: RoomFairies
    fairy: FairyState
    recorder: OneShotRecorder

    @property
    def feedback_key(self) -> str:
        """[run-feedback hook] the run's key in the room's feedback, as a fairy's run."""
        return f"{self.session.session_id}:{self.fairy.fairy_id}"


class CanvasAgent:
    """One-shot canvas agent. Extend by subclassing `mode_for` / `prompt_state`."""

    def __init__(self, config: AgentConfig | None = None) -> None:
        self.config = config or AgentConfig()
        self.fairies = self.config.fairies or FairyRuntime(
            max_followups=self.config.settings.steward_max_followups
        )
        self._driver = TurnDriver()

    def use(self, fairies: FairyRuntime) -> None:
        """Keep the one-shotting fairies on `fairies` (the service's, once it has a store)."""
        self.fairies = fairies

    async def fairy(self, room_id: str, asker: str) -> FairyState:
        """`asker`'s one-shotting fairy in the room."""
        return one_shot_fairy(await self.fairies.room(room_id), asker)

    # -- hooks for modes built on top ----------------------------------------------------
    def mode_for(self, prompt: PromptInput) -> ModeDefinition:
        return self.config.mode

    def actions(self, prompt: PromptInput) -> tuple[str, ...]:
        """Its mode's actions but the fairy ones: this agent has no fairy to move."""
        names = self.mode_for(prompt).actions
        return tuple(n for n in names if ACTIONS[n].family != "fairy")

    def model_for(self, prompt: PromptInput) -> ModelProvider:
        if self.config.model is not None:
            return self.config.model
        spec = prompt.model or self.config.settings.model_for_role("one-shot")
        return get_model(spec, self.config.settings, tokens_per_s=self.config.tokens_per_s)

    # -- AgentRunner -------------------------------------------------------------------------
    async def run(self, session: SessionPort, prompt: PromptInput) -> str:
        settings = self.config.settings
        model = self.model_for(prompt)
        budget = self._budget()
        refusal = await budget.refusal(session.room_id) if budget is not None else None
        if refusal is not None:
            await session.send_chat(refusal, role="system")
            await session.send_status("error", "budget exceeded")
            return "error: budget exceeded"
        room = await self.fairies.room(session.room_id)
        fairy = one_shot_fairy(room, prompt.requester)
        # The fairy streams into the session the room opened for the prompt (lent to it).
        fairy.lent = fairy.session = session
        ctx = RunState(shapes=session.canvas.shapes, todo=fairy.todo)
        recorder = OneShotRecorder(self.fairies.records, room, fairy, self.mode_for(prompt).memory)
        run = _Run(
            session=session,
            ctx=ctx,
            model_name=model.name,
            prompt=prompt,
            room=room,
            fairy=fairy,
            recorder=recorder,
        )
        recorder.request(prompt.message, session)  # history: who asked, which run
        dog = Watchdog(settings.steward_watchdog_s, settings.steward_session_max_s)
        try:
            async with dog.guard():
                run.progress = dog.progress
                outcome = await self._loop(run, model)
        except TimeoutError:
            await self._revert_inflight(run, "watchdog")
            await session.send_status("error", "watchdog: the run stalled or took too long")
            outcome = "error: watchdog"
        except asyncio.CancelledError:
            await shielded_revert(self._driver, run.turn, "canceled")
            raise
        except ModelError as err:
            await self._revert_inflight(run, "the model failed")
            await session.send_chat(f"The model failed: {err}", role="system")
            await session.send_status("error", str(err)[:200])
            outcome = f"error: {err}"
        finally:
            if fairy.lent is session:
                fairy.lent = fairy.session = None
            await recorder.flush()
            await self._record_usage(run, model)
        if outcome == "done":
            await session.send_status("done")
        elif outcome == "canceled":
            await session.send_status("canceled")
        log.info(
            "agent_run_end",
            room=session.room_id,
            session=session.session_id,
            outcome=outcome,
            requests=run.request_no,
            ops=run.ops_sent,
            notes=run.ctx.notes[:10],
        )
        return outcome

    async def _loop(self, run: _Run, model: ModelProvider) -> str:
        gaze = Gaze(Look(None, "asker"))

        async def request(request_no: int, followup: Scheduled | None) -> TurnEnd:
            run.request_no = request_no
            return await self._request(run, model, followup, gaze.next(followup))

        async def on_followup(decision: LoopDecision) -> None:
            await run.session.send_status("scheduled", decision.reason)

        end = await run_requests(
            request,
            run.ctx,
            max_followups=self.config.settings.steward_max_followups,
            made_progress=lambda: run.ops_sent > 0,
            on_followup=on_followup,
        )
        return "canceled" if end == "canceled" else "done"

    def prompt_state(
        self, run: _Run, context: Any, followup: Scheduled | None, look: Look | None = None
    ) -> PromptState:
        # The area the screenshot shows is the one the text names: the asker's view, or the
        # agent's own (setMyView) or a review area, with the asker's view beside it.
        view = shown(look or Look(None, "asker"), context, askers=True)
        p = run.prompt
        # [run-feedback hook] this run's own notes and lints, never another run's
        notes, lints = run.room.feedback.take(run.feedback_key, run.session.canvas.shapes)
        return PromptState(
            message=p.message,
            model_name=p.model or self.config.settings.model_for_role("one-shot"),
            shapes=run.session.canvas.shapes,
            viewport=view.viewport,
            view_kind=view.kind,
            user_viewport=view.asker_view,
            coords=run.ctx.coords,
            enabled_actions=self.actions(p),
            selection=run.selection_for(context.selection or list(p.selection), asked=True),
            context_bounds=Rect(p.bounds.x, p.bounds.y, p.bounds.w, p.bounds.h)
            if p.bounds
            else None,
            screenshot=context.screenshot,
            screenshot_type=context.screenshot_type,
            history=thread_for(
                room_thread(run.room, self.mode_for(p).memory), run.session.session_id
            ),
            asker=p.requester,  # history: other askers' runs are summarised
            user_changes=list(context.user_changes or []),
            view_note=context.view_note,
            todo=run.ctx.todo,
            scheduled=list(run.ctx.scheduled),
            followup=followup,
            now_iso=self.config.clock().isoformat(timespec="seconds"),
            blurry_cap=self.config.settings.steward_blurry_shape_cap,
            mode=self.mode_for(p).name,
            notes=notes,
            lints=lints,
        )

    def hooks(self, run: _Run) -> TurnHooks:
        """The one-shot agent's turn hooks: its mode's actions, its fairy's history."""
        enabled = select(self.actions(run.prompt))
        said, acted = run.recorder.hooks(run.session)
        return TurnHooks(actions=lambda: enabled, said=said, applied=acted, mark=self.config.mark)

    async def _request(
        self, run: _Run, model: ModelProvider, followup: Scheduled | None, look: Look
    ) -> TurnEnd:
        session = run.session
        bounds = look.area
        await session.send_status("waiting_context")
        box = Box(x=bounds.x, y=bounds.y, w=bounds.w, h=bounds.h) if bounds is not None else None
        context = await session.request_context(bounds=box or run.prompt.bounds)
        run.progress()
        if run.request_no == 0 and run.ctx.coords.fresh:
            run.ctx.coords = CoordinateSpace(context.viewport.x, context.viewport.y)
        mode = self.mode_for(run.prompt)
        request = build_request(self.prompt_state(run, context, followup, look), mode)
        turn = run.new_turn(run.request_no, self.hooks(run))
        try:
            return await self._driver.drive(turn, model, request, run.usage)
        finally:
            run.ops_sent += turn.ops_sent
            self._keep_notes(run)
            await run.recorder.flush()

    def _keep_notes(self, run: _Run) -> None:
        """This request's notes and shapes wait for the run's next request (follow-up or not)."""
        drawn = run.turn.drawn if run.turn is not None else None  # [run-feedback hook]
        run.room.feedback.keep(run.feedback_key, run.fresh_notes(), drawn)

    async def _revert_inflight(self, run: _Run, why: str) -> None:
        if run.turn is not None:
            await self._driver.revert_inflight(run.turn, why)
            await self._driver.finish_chats(run.turn)

    def _budget(self) -> RoomBudget | None:
        usage = self.config.usage
        if usage is None:
            return None
        return RoomBudget(usage, self.config.settings.steward_room_daily_budget_usd)

    async def _record_usage(self, run: _Run, model: ModelProvider) -> None:
        budget = self._budget()
        if budget is not None:
            await budget.record(
                session_id=run.session.session_id,
                room_id=run.session.room_id,
                model=model.name,
                usage=run.usage,
            )
