"""The follow-up loop of a run: when to run another request (scheduled reviews, detail
passes, view moves, data, todos) and the loop that runs them (`run_requests`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from steward.actions.base import RunState, Scheduled, TodoItem
from steward.turns.turn import TurnEnd

# Which scheduled kinds continue the loop, most important first.
_ORDER = ("view", "review", "add-detail", "data")


def unfinished(todo: list[TodoItem]) -> list[TodoItem]:
    return [t for t in todo if t.status != "done"]


@dataclass
class LoopDecision:
    """Whether a run makes another request, which follow-up it is, and why."""

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


# One request of a run: (request number, the follow-up it answers, bounds to look at).
RequestFn = Callable[[int, Scheduled | None], Awaitable[TurnEnd]]


async def run_requests(
    request: RequestFn,
    ctx: RunState,
    *,
    max_followups: int,
    made_progress: Callable[[], bool],
    on_followup: Callable[[LoopDecision], Awaitable[None]] | None = None,
) -> TurnEnd:
    """Run requests while the actions scheduled more (review, add-detail, view, data, todo)."""
    followup: Scheduled | None = None
    shown: list[Scheduled] = []  # data answers handed to the request that just ran
    for request_no in range(max_followups + 1):
        end = await request(request_no, followup)
        if end != "done":
            return end
        ctx.scheduled = [s for s in ctx.scheduled if all(s is not d for d in shown)]
        decision = next_step(
            ctx.scheduled,
            ctx.todo,
            made_progress=made_progress(),
            followups_left=max_followups - request_no,
        )
        if decision.followup is None:
            return "done"
        followup = decision.followup
        if on_followup is not None:
            await on_followup(decision)
        # Data answers reach the next request whatever it follows up (then they are gone).
        shown = [s for s in ctx.scheduled if s.kind == "data"]
        ctx.scheduled = list(shown)
    return "done"
