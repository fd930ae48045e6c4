"""The room's daily model budget and usage records, for every role and every model call.

A one-shot prompt and each crew request ask `refusal` before calling a model and `record`
what each call used (input, output and cache tokens, the model, its estimated cost), so
per-role models are priced each at its own rate.
"""

from __future__ import annotations

from typing import Protocol

from steward.model.base import Usage, estimate_cost
from steward.obs import metrics
from steward.obs.logging import get_logger

log = get_logger(__name__)


class UsageRecorder(Protocol):
    """Usage persistence (see `steward.store.usage.UsageRepo`)."""

    async def spent_today(self, room_id: str) -> float: ...

    async def record(
        self, *, session_id: str, room_id: str, model: str, usage: Usage, cost_usd: float
    ) -> None: ...


class RoomBudget:
    """The room's daily model spend: refuses a call once spent, and records each call's usage."""

    def __init__(self, usage: UsageRecorder, daily_usd: float) -> None:
        self.usage = usage
        self.daily_usd = daily_usd

    async def refusal(self, room_id: str) -> str | None:
        """The chat message refusing a model call in `room_id`, or None within budget."""
        spent = await self.usage.spent_today(room_id)
        if spent < self.daily_usd:
            return None
        log.warning("budget_exceeded", room=room_id, spent=spent, budget=self.daily_usd)
        metrics.BUDGET_EXCEEDED.inc()
        return (
            f"This room has used its daily model budget (${spent:.2f} of "
            f"${self.daily_usd:.2f}); new requests are refused until tomorrow (UTC)."
        )

    async def record(self, *, session_id: str, room_id: str, model: str, usage: Usage) -> None:
        """Never raises: usage must never break a run."""
        if not (usage.input_tokens or usage.output_tokens):
            return
        try:
            await self.usage.record(
                session_id=session_id,
                room_id=room_id,
                model=model,
                usage=usage,
                cost_usd=estimate_cost(model, usage),
            )
        except Exception as err:
            log.error("usage_record_failed", room=room_id, error=str(err))
