"""Talking and planning: message, think, review, add-detail, update-todo-list, setMyView,
count, unknown."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from steward.actions.base import ActionContext, ActionModel, ActionSpec, Scheduled, TodoItem, WireOp
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
        data: dict[str, Any], ctx: ActionContext, index: int, complete: bool
    ) -> dict[str, Any] | None:
        text = to_text(data.get(key))
        if text is None:
            return None if complete or key not in data else {**data, key: ""}
        return {**data, key: text}

    return sanitize


def _box(data: dict[str, Any], ctx: ActionContext, key: str) -> Rect | None:
    vals = [to_number(data.get(k)) for k in ("x", "y")] + [to_size(data.get(k)) for k in "wh"]
    if any(v is None for v in vals):
        return None
    x, y, w, h = (float(v) for v in vals if v is not None)
    page = ctx.coords.box_from_model(key, {"x": x, "y": y, "w": w, "h": h})
    return Rect(page["x"], page["y"], max(page["w"], 1.0), max(page["h"], 1.0))


def _complete_only(
    data: dict[str, Any], ctx: ActionContext, index: int, complete: bool
) -> dict[str, Any] | None:
    return data if complete else None


def _nothing(data: dict[str, Any], ctx: ActionContext) -> list[WireOp]:
    return []


def _resolve_message(data: dict[str, Any], ctx: ActionContext) -> list[WireOp]:
    # Chat text travels as `Outcome.chat` (partial versions included), not as a wire verb.
    return []


def _resolve_think(data: dict[str, Any], ctx: ActionContext) -> list[WireOp]:
    return [WireOp("think", {"text": str(data.get("text", ""))})]


def _resolve_review(data: dict[str, Any], ctx: ActionContext) -> list[WireOp]:
    box = _box(data, ctx, "review")
    ctx.scheduled.append(Scheduled("review", str(data.get("intent") or "Review your work."), box))
    return []


def _resolve_add_detail(data: dict[str, Any], ctx: ActionContext) -> list[WireOp]:
    text = str(data.get("intent") or "Add detail.")
    ctx.scheduled.append(Scheduled("add-detail", text))
    return [WireOp("add_detail", {"text": text})]


def _sanitize_todo(
    data: dict[str, Any], ctx: ActionContext, index: int, complete: bool
) -> dict[str, Any] | None:
    if not complete:
        return None
    tid = to_number(data.get("id"))
    status = norm_enum(
        data.get("status"), ("todo", "in-progress", "done"),
        {"doing": "in-progress", "started": "in-progress", "complete": "done",
         "completed": "done", "pending": "todo", "in-process": "in-progress"},
    )  # fmt: skip
    if tid is None:
        tid = float(max((t.id for t in ctx.todo), default=0) + 1)
    return {
        **data,
        "id": int(tid),
        "status": status or "todo",
        "text": to_text(data.get("text")) or "",
    }


def _resolve_todo(data: dict[str, Any], ctx: ActionContext) -> list[WireOp]:
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


def _resolve_view(data: dict[str, Any], ctx: ActionContext) -> list[WireOp]:
    box = _box(data, ctx, "view")
    if box is None:
        return []
    # The agent's own view moves (its next request looks there); the users' cameras stay.
    ctx.scheduled.append(Scheduled("view", str(data.get("intent") or "Look here."), box))
    return []


def _resolve_count(data: dict[str, Any], ctx: ActionContext) -> list[WireOp]:
    expr = str(data.get("expression") or "all").strip().lower()
    if expr in ("all", "*", "shapes", ""):
        n = len(ctx.shapes)
    else:
        n = sum(1 for s in ctx.shapes.values() if model_type(s) == expr or s.get("type") == expr)
    ctx.scheduled.append(Scheduled("data", f"count({expr}) = {n}"))
    return []


def _resolve_unknown(data: dict[str, Any], ctx: ActionContext) -> list[WireOp]:
    ctx.notes.append(f"ignored unknown action {str(data.get('_type'))[:40]!r}")
    return []


def _needs_box(
    data: dict[str, Any], ctx: ActionContext, index: int, complete: bool
) -> dict[str, Any] | None:
    if not complete:
        return None
    return data


SPECS = (
    ActionSpec("message", "communicate", Message, "Send a message to the user.",
               "`message`: talk to the user (the only thing they read).",
               _text_field("text"), _resolve_message, streams=True),
    ActionSpec("think", "communicate", Think, "Describe your reasoning (not shown to the user).",
               "`think`: reason step by step; invisible to the user.",
               _complete_only, _resolve_think),
    ActionSpec("review", "communicate", Review,
               "Schedule a follow-up look at an area of the canvas to check your work.",
               "`review`: look again at the area x, y, w, h after these actions.",
               _needs_box, _resolve_review, continues=True),
    ActionSpec("add-detail", "communicate", AddDetail, "Plan further work to add detail.",
               "`add-detail`: schedule another pass to add detail.",
               _complete_only, _resolve_add_detail, continues=True),
    ActionSpec("update-todo-list", "communicate", UpdateTodo,
               "Create or update one item of your todo list.",
               "`update-todo-list`: keep a todo list (id, status todo/in-progress/done, text).",
               _sanitize_todo, _resolve_todo, atomic_fields=("status",)),
    ActionSpec("setMyView", "communicate", SetMyView,
               "Move your own viewport; you get a new look at the canvas afterwards.",
               "`setMyView`: move your viewport to x, y, w, h; send nothing after it.",
               _needs_box, _resolve_view, continues=True),
    ActionSpec("count", "communicate", Count, "Count shapes; the answer arrives as data.",
               "`count`: count shapes of a `_type` (or 'all'); you get the number next turn.",
               _complete_only, _resolve_count, continues=True),
    ActionSpec("unknown", "communicate", Unknown, "Anything not covered (ignored).",
               "`unknown`: placeholder; it does nothing.",
               _complete_only, _resolve_unknown),
)  # fmt: skip
