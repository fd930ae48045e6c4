"""`review`: ask for another look at an area to check the work."""

from __future__ import annotations

from typing import Any

from steward.actions.base import ActionModel, ActionSpec, RunState, Scheduled, WireOp
from steward.actions.communicate.areas import named_area, needs_box


class Review(ActionModel):
    """What the model writes for `review`: why, and the page area to look at again next request."""

    intent: str
    x: float
    y: float
    w: float
    h: float


def _resolve_review(data: dict[str, Any], ctx: RunState) -> list[WireOp]:
    box = named_area(data, ctx, "review")
    ctx.scheduled.append(Scheduled("review", str(data.get("intent") or "Review your work."), box))
    return []


# Its system-prompt section (ActionSpec.guide); docs/PROMPT.md maps the kit's rules to it.
_REVIEW = """Ask for another look at your work: the area to inspect (x, y, w, h: as tight as you
can with a little padding around it) and what to check. After your reply you get a fresh view of
that area and can fix what you find.
- Review after several changes; without it you work blind. Do not review a single simple edit (one
  shape created, moved or changed): assume it worked.
- While reviewing, trust the image most. Check: do arrows meet the shapes they point at? Do labels
  sit inside their shapes, well placed? Do any shapes or labels overlap (then move the shapes, the
  labels, or both)? Is anything floating that should touch another shape? Do arrows cross other
  shapes? Is the whole balanced, like a good photo or a tidy graph?
- Write your closing message before the `review`. If the review finds nothing to fix, do not say
  it again: reply with a thought only. If you fix something, say briefly what.
- Fix what the review finds. Review again only after larger fixes, not after simple ones or when
  nothing changed. It also suits checking your todo list.
- Work you leave unfinished only continues if you schedule it: while more remains, review. When the
  task is done well enough, stop and tell the user instead of reviewing again; be realistic about
  what the available shapes can do."""

REVIEW = ActionSpec(
    "review",
    family="communicate",
    kind="talk",
    schema=Review,
    description="Schedule a follow-up look at an area of the canvas to check your work.",
    guide=_REVIEW,
    sanitize=needs_box,
    resolve=_resolve_review,
    continues=True,
)
