"""Where one request of a run looks, so its viewport text, shape tiers and screenshot all
describe the same area.

A run starts at its base view (the asker's, the fairy's own or task area, the room's). A
`setMyView` moves the fairy's own view for the rest of the run; a `review` of an area looks
there for the request that answers it only, then the run looks where it looked before.
"""

from __future__ import annotations

from dataclasses import dataclass

from steward.actions.base import Scheduled
from steward.ports import CanvasSnapshot
from steward.prompt.state import ViewKind
from steward.protocol.box import Box


@dataclass(frozen=True)
class Look:
    """The area one request shows (None: wherever the asker looks, as its browser reports)
    and what that area is, for the words the model reads."""

    area: Box | None
    kind: ViewKind


class Gaze:
    """The looks of one run, request by request."""

    def __init__(self, base: Look) -> None:
        self.own = base  # where the run looks when no follow-up points elsewhere

    def next(self, followup: Scheduled | None) -> Look:
        if followup is None or followup.bounds is None:
            return self.own
        if followup.kind == "view":
            self.own = Look(followup.bounds, "own")
            return self.own
        if followup.kind == "review":
            return Look(followup.bounds, "review")
        return self.own


@dataclass(frozen=True)
class Shown:
    """What one request shows, as the prompt state takes it."""

    viewport: Box  # the area of the screenshot and the shape tiers
    kind: ViewKind
    asker_view: Box | None  # the asker's viewport, listed beside it when it is another


def shown(look: Look, context: CanvasSnapshot, *, askers: bool) -> Shown:
    """The area `look` showed in `context`. `askers`: the context is the asker's (a prompt's
    session), so its viewport is the asker's view; a context with a `view_note` is the
    host's view instead (no browser behind the prompt)."""
    reported = context.viewport
    if look.area is None:
        kind = look.kind if askers and context.view_note is None else "room"
        return Shown(reported, kind, None)
    theirs = reported if askers and context.view_note is None else None
    return Shown(look.area, look.kind, theirs)
