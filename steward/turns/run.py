"""One run, whatever kind of request began it: a prompt (a user's, or a fairy's queued request)
and every follow-up request it leads to (review, add-detail, setMyView, data, todos).

One-shot prompts and crew requests keep the same run state and start each model request of
a run the same way: on the room's canvas as it is now, with the previous request's id
claims cleared (ids the model names stay stable through `ctx.id_map` within a request).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from steward.actions.base import RunState
from steward.model.base import Usage
from steward.ports import SessionPort
from steward.turns.turn import Turn, TurnHooks


@dataclass
class Run:
    """State of one run: its session, its action state, and what it has done so far."""

    session: SessionPort
    ctx: RunState
    model_name: str
    turn: Turn | None = None  # the model request running now (or last)
    request_no: int = 0
    ops_sent: int = 0
    notes_kept: int = 0  # how many of ctx.notes were handed on to the run's next request
    usage: Usage = field(default_factory=Usage)
    # What the model is shown as selected: the asker's selection when a user's prompt began
    # the run (kept for its follow-ups); nothing in runs nobody asked for just now.
    selection: list[str] | None = None
    progress: Callable[[], None] = lambda: None  # the watchdog's: output or context arrived

    def new_turn(self, request_no: int, hooks: TurnHooks) -> Turn:
        """The run's next model request, on the room's canvas as it is now."""
        self.ctx.shapes = self.session.canvas.shapes
        self.ctx.room_claims = self.session.canvas.claims
        self.ctx.id_map.clear()
        self.ctx.claimed.clear()
        self.turn = Turn(self.session, self.ctx, request_no, hooks, progress=self.progress)
        return self.turn

    def selection_for(self, selected: list[str], *, asked: bool) -> list[str]:
        """What the run shows as selected: `selected` as the run's first context had it when
        someone asked for this run (kept for its follow-ups), else nothing."""
        if self.selection is None:
            self.selection = list(selected) if asked else []
        return list(self.selection)

    def fresh_notes(self) -> list[str]:
        """The notes of this run's requests not handed on yet (they go to the next prompt)."""
        fresh = self.ctx.notes[self.notes_kept :]
        self.notes_kept = len(self.ctx.notes)
        return fresh
