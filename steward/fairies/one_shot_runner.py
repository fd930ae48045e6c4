"""The one-shot facade: the `AgentRunner` that answers a one-shot prompt as its
asker's one-shotting fairy on the fairy runtime (`FairyRuntime.one_shot`): the prompt is a
request queued to that fairy with the prompt's session lent to it, run by the fairy's worker
and built by the one request builder (`fairy_request`), like every fairy's request.

It picks the model (the config's, else the prompt's, else the one-shot role's), refuses a
prompt over the room's daily budget before anything runs, and hands the run its guards
(watchdog, budget, clock, measurement hook); the run itself is `request_runner`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from steward.config import Settings, get_settings
from steward.fairies.modes import MODES, ModeDefinition
from steward.fairies.one_shot import one_shot_fairy
from steward.fairies.one_shot_job import OneShotJob
from steward.fairies.room_fairies import FairyState
from steward.fairies.runtime import FairyRuntime
from steward.model.base import ModelProvider
from steward.model.registry import get_model
from steward.ports import PromptInput, SessionPort
from steward.turns.model_budget import RoomBudget, UsageRecorder


class BudgetExceeded(Exception):
    """The room's daily model budget is spent: the prompt is refused before any model call."""


@dataclass
class OneShotConfig:
    """Constructor input of `OneShotRunner`."""

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


class OneShotRunner:
    """The one-shot facade over the fairy runtime's one-shotting fairies.
    Extend by subclassing `mode_for` / `model_for`."""

    def __init__(self, config: OneShotConfig | None = None) -> None:
        self.config = config or OneShotConfig()
        self.fairies = self.config.fairies or FairyRuntime(
            max_followups=self.config.settings.steward_max_followups
        )

    def use(self, fairies: FairyRuntime) -> None:
        """Keep the one-shotting fairies on `fairies` (the service's, once it has a store)."""
        self.fairies = fairies

    async def fairy(self, room_id: str, asker: str) -> FairyState:
        """`asker`'s one-shotting fairy in the room."""
        return one_shot_fairy(await self.fairies.room(room_id), asker)

    # -- hooks for modes built on top ----------------------------------------------------
    def mode_for(self, prompt: PromptInput) -> ModeDefinition:
        return self.config.mode

    def model_for(self, prompt: PromptInput) -> ModelProvider:
        if self.config.model is not None:
            return self.config.model
        spec = prompt.model or self.config.settings.model_for_role("one-shot")
        return get_model(spec, self.config.settings, tokens_per_s=self.config.tokens_per_s)

    # -- AgentRunner -------------------------------------------------------------------------
    async def run(self, session: SessionPort, prompt: PromptInput) -> str:
        budget = self._budget()
        refusal = await budget.refusal(session.room_id) if budget is not None else None
        if refusal is not None:
            await session.send_chat(refusal, role="system")
            await session.send_status("error", "budget exceeded")
            return "error: budget exceeded"
        job = OneShotJob(
            session=session,
            prompt=prompt,
            provider=self.model_for(prompt),
            mode=self.mode_for(prompt),
            settings=self.config.settings,
            budget=budget,
            clock=self.config.clock,
            mark=self.config.mark,
        )
        return await self.fairies.one_shot(job)

    def _budget(self) -> RoomBudget | None:
        usage = self.config.usage
        if usage is None:
            return None
        return RoomBudget(usage, self.config.settings.steward_room_daily_budget_usd)
