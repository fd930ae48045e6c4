"""What a one-shot prompt hands its asker's one-shotting fairy with the request it queues:
the prompt's session (lent to the fairy for the run), the prompt itself, the model that
answers it and the run's guards (watchdog limits, the room's budget, the measurement hook,
the clock), and the outcome the prompt's caller waits for.

The request is run by the fairy's worker like any fairy request (`request_runner`); the job
only says how this one is answered and where its outcome goes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from steward.config import Settings
from steward.fairies.asked import Asked
from steward.fairies.modes import ModeDefinition
from steward.model.base import ModelProvider
from steward.ports import PromptInput, SessionPort
from steward.turns.model_budget import RoomBudget


@dataclass(kw_only=True)
class OneShotJob:
    """A one-shot prompt handed to its asker's fairy: the session, the prompt, its model, its guards
    and its outcome."""

    session: SessionPort
    prompt: PromptInput
    provider: ModelProvider
    mode: ModeDefinition
    settings: Settings
    budget: RoomBudget | None = None
    clock: Callable[[], datetime]
    # `steward bench latency`: mark(kind, key) at "model_request" and "action_complete".
    mark: Callable[[str, str], None] | None = None
    outcome: asyncio.Future[str] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )

    @property
    def asked(self) -> Asked:
        """What the prompt says beside its text (the model its words name: the prompt's,
        else the one-shot role's)."""
        return Asked(
            bounds=self.prompt.bounds,
            selection=tuple(self.prompt.selection),
            asker=self.prompt.requester,
            channel=self.prompt.channel,
            model_spec=self.prompt.model or self.settings.model_for_role("one-shot"),
            mode=self.mode,
            blurry_cap=self.settings.steward_blurry_shape_cap,
            clock=self.clock,
        )

    def settle(self, outcome: str | BaseException) -> None:
        """Hand the caller the run's outcome (or what stopped it), once."""
        if self.outcome.done():
            return
        if isinstance(outcome, asyncio.CancelledError):
            self.outcome.cancel()
        elif isinstance(outcome, BaseException):
            self.outcome.set_exception(outcome)
        else:
            self.outcome.set_result(outcome)
