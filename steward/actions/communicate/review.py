"""Talking and planning: message, think, review, add-detail, update-todo-list, setMyView,
count, unknown."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from steward.actions.base import ActionModel, ActionSpec, RunState, Scheduled, TodoItem, WireOp
from steward.actions.sanitize import norm_enum, to_number, to_size, to_text
from steward.canvas.bounds import Rect
from steward.canvas.simple import model_type


class Message(ActionModel):
    text: str


class Think(ActionModel):
    text: str


class Review(ActionModel):
    intent: str
    x: float
    y: float
    w: float
    h: float


class AddDetail(ActionModel):
    intent: str


class UpdateTodo(ActionModel):
    id: int
    status: Literal["todo", "in-progress", "done"]
    text: str


class SetMyView(ActionModel):
    intent: str
    x: float
    y: float
    w: float
    h: float


class Count(ActionModel):
    expression: str = Field(description="A shape _type to count, or 'all'")


class Unknown(ActionModel):
    intent: str = ""


def _text_field(key: str) -> Any:
    def sanitize(
        data: dict[str, Any], ctx: RunState, index: int, complete: bool
    ) -> dict[str, Any] | None:
        text = to_text(data.get(key))
        if text is None:
            return None if complete or key not in data else {**data, key: ""}
        return {**data, key: text}

    return sanitize


def _box(data: dict[str, Any], ctx: RunState, key: str) -> Rect | None:
    vals = [to_number(data.get(k)) for k in ("x", "y")] + [to_size(data.get(k)) for k in "wh"]
    if any(v is None for v in vals):
        return None
    x, y, w, h = (float(v) for v in vals if v is not None)
    page = ctx.coords.box_from_model(key, {"x": x, "y": y, "w": w, "h": h})
    return Rect(page["x"], page["y"], max(page["w"], 1.0), max(page["h"], 1.0))


def _complete_only(
    data: dict[str, Any], ctx: RunState, index: int, complete: bool
) -> dict[str, Any] | None:
    return data if complete else None


def _nothing(data: dict[str, Any], ctx: RunState) -> list[WireOp]:
    return []


def _resolve_message(data: dict[str, Any], ctx: RunState) -> list[WireOp]:
    # Chat text travels as `Outcome.chat` (partial versions included), not as a wire verb.
    return []


def _chat_text(data: dict[str, Any]) -> str:
    return str(data.get("text", ""))


def _resolve_think(data: dict[str, Any], ctx: RunState) -> list[WireOp]:
    return [WireOp("think", {"text": str(data.get("text", ""))})]


def _resolve_review(data: dict[str, Any], ctx: RunState) -> list[WireOp]:
    box = _box(data, ctx, "review")
    ctx.scheduled.append(Scheduled("review", str(data.get("intent") or "Review your work."), box))
    return []


def _resolve_add_detail(data: dict[str, Any], ctx: RunState) -> list[WireOp]:
    text = str(data.get("intent") or "Add detail.")
    ctx.scheduled.append(Scheduled("add-detail", text))
    return [WireOp("add_detail", {"text": text})]


def _sanitize_todo(
    data: dict[str, Any], ctx: RunState, index: int, complete: bool
) -> dict[str, Any] | None:
    if not complete:
        return None
    tid = to_number(data.get("id"))
    status = norm_enum(
        data.get("status"),
        ("todo", "in-progress", "done"),
        {
            "doing": "in-progress",
            "started": "in-progress",
            "complete": "done",
            "completed": "done",
            "pending": "todo",
            "in-process": "in-progress",
        },
    )
    if tid is None:
        tid = float(max((t.id for t in ctx.todo), default=0) + 1)
    return {
        **data,
        "id": int(tid),
        "status": status or "todo",
        "text": to_text(data.get("text")) or "",
    }


def _resolve_todo(data: dict[str, Any], ctx: RunState) -> list[WireOp]:
    for item in ctx.todo:
        if item.id == data["id"]:
            item.status = data["status"]
            if data["text"]:
                item.text = data["text"]
            break
    else:
        ctx.todo.append(TodoItem(data["id"], data["text"], data["status"]))
    items = [{"id": str(t.id), "text": t.text, "status": t.status} for t in ctx.todo]
    return [WireOp("todo", {"items": items})]


def _resolve_view(data: dict[str, Any], ctx: RunState) -> list[WireOp]:
    box = _box(data, ctx, "view")
    if box is None:
        return []
    # The agent's own view moves (its next request looks there); the users' cameras stay.
    ctx.scheduled.append(Scheduled("view", str(data.get("intent") or "Look here."), box))
    return []


def _resolve_count(data: dict[str, Any], ctx: RunState) -> list[WireOp]:
    expr = str(data.get("expression") or "all").strip().lower()
    if expr in ("all", "*", "shapes", ""):
        n = len(ctx.shapes)
    else:
        n = sum(1 for s in ctx.shapes.values() if model_type(s) == expr or s.get("type") == expr)
    ctx.scheduled.append(Scheduled("data", f"count({expr}) = {n}"))
    return []


def _resolve_unknown(data: dict[str, Any], ctx: RunState) -> list[WireOp]:
    ctx.notes.append(f"ignored unknown action {str(data.get('_type'))[:40]!r}")
    return []


def _needs_box(
    data: dict[str, Any], ctx: RunState, index: int, complete: bool
) -> dict[str, Any] | None:
    if not complete:
        return None
    return data


# System-prompt sections (ActionSpec.guide); docs/PROMPT.md maps the kit's rules to them.
_MESSAGE = """Talk to the user; it is the only thing of yours they read.
- Close each piece of work with a short message: what you did, or why you could not.
- Do the work rather than offering to do it; do not end by asking whether they want more."""

_THINK = """Reason before and between actions; use it freely to work through each step.
- The users see your thoughts in the chat panel, collapsed under your messages: keep them about
  the work. A reply made only of thoughts tells the user nothing new. That is right after a review
  that found nothing to fix (your message before it closed the work); otherwise pair thoughts with
  a `message` or with work on the canvas."""

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

_ADD_DETAIL = """Plan another pass to add detail; you are called again with your intent and a fresh
view. Use it when the first pass is laid out and refinement is easier on top of it."""

_TODO = """Keep a todo list for work with several steps.
- When a new task arrives, add one item per step (a new id each, status `todo`), then start the
  first step in the same reply: a plan alone does nothing.
- Move items to `in-progress` and `done` as you go (same id, new status).
- Never add an item that waits for the user to do something; if you need something from them, say
  so with `message`."""

_SET_MY_VIEW = """Move your own viewport to x, y, w, h: to work on another part of the canvas, or
to zoom (a smaller box shows more detail, a larger one more of the canvas).
- Send nothing after it in the same reply: the next request shows the new view, and you continue
  from there."""

_COUNT = """Count the shapes of one `_type` (or `all`). The answer comes as data in the next
request, so end your reply after asking; independent lookups can go in one reply. If a lookup
fails, tell the user rather than asking again."""

MESSAGE = ActionSpec(
    "message",
    family="communicate",
    kind="talk",
    schema=Message,
    description="Send a message to the user.",
    guide=_MESSAGE,
    sanitize=_text_field("text"),
    resolve=_resolve_message,
    streams=True,
    chat=_chat_text,
)

THINK = ActionSpec(
    "think",
    family="communicate",
    kind="talk",
    schema=Think,
    description="Describe your reasoning (shown to the users, collapsed, in the chat panel).",
    guide=_THINK,
    sanitize=_complete_only,
    resolve=_resolve_think,
)

REVIEW = ActionSpec(
    "review",
    family="communicate",
    kind="talk",
    schema=Review,
    description="Schedule a follow-up look at an area of the canvas to check your work.",
    guide=_REVIEW,
    sanitize=_needs_box,
    resolve=_resolve_review,
    continues=True,
)

ADD_DETAIL = ActionSpec(
    "add-detail",
    family="communicate",
    kind="talk",
    schema=AddDetail,
    description="Plan further work to add detail.",
    guide=_ADD_DETAIL,
    sanitize=_complete_only,
    resolve=_resolve_add_detail,
    continues=True,
)

UPDATE_TODO_LIST = ActionSpec(
    "update-todo-list",
    family="communicate",
    kind="talk",
    schema=UpdateTodo,
    description="Create or update one item of your todo list.",
    guide=_TODO,
    sanitize=_sanitize_todo,
    resolve=_resolve_todo,
    atomic_fields=("status",),
)

SET_MY_VIEW = ActionSpec(
    "setMyView",
    family="communicate",
    kind="talk",
    schema=SetMyView,
    description="Move your own viewport; you get a new look at the canvas afterwards.",
    guide=_SET_MY_VIEW,
    sanitize=_needs_box,
    resolve=_resolve_view,
    continues=True,
)

COUNT = ActionSpec(
    "count",
    family="communicate",
    kind="talk",
    schema=Count,
    description="Count shapes; the answer arrives as data.",
    guide=_COUNT,
    sanitize=_complete_only,
    resolve=_resolve_count,
    continues=True,
)

UNKNOWN = ActionSpec(
    "unknown",
    family="communicate",
    kind="talk",
    schema=Unknown,
    description="Anything not covered (ignored).",
    guide="",
    sanitize=_complete_only,
    resolve=_resolve_unknown,
    offered=False,
)
