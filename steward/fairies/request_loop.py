"""When to run another request: scheduled reviews, detail passes, view moves, data, todos."""

from __future__ import annotations

from dataclasses import dataclass

from steward.actions.base import Scheduled, TodoItem
from steward.fairies.todo import unfinished

# Which scheduled kinds continue the loop, most important first.
_ORDER = ("view", "review", "add-detail", "data")


@dataclass
class LoopDecision:
    followup: Scheduled | None
    reason: str


def next_step(
    scheduled: list[Scheduled], todo: list[TodoItem], *, made_progress: bool, followups_left: int
) -> LoopDecision:
    if followups_left <= 0:
        return LoopDecision(None, "follow-up limit reached")
    for kind in _ORDER:
        for item in scheduled:
            if item.kind == kind:
                return LoopDecision(item, kind)
    if unfinished(todo) and made_progress:
        left = ", ".join(t.text for t in unfinished(todo)[:3])
        return LoopDecision(Scheduled("todo", f"unfinished: {left}"), "todo")
    return LoopDecision(None, "finished")
