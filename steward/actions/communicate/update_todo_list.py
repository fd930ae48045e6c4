"""`update-todo-list`: create or update one item of the todo list."""

from __future__ import annotations

from typing import Any, Literal

from steward.actions.base import ActionModel, ActionSpec, RunState, TodoItem, WireOp
from steward.actions.sanitize import norm_enum, to_number, to_text


class UpdateTodo(ActionModel):
    """What the model writes for `update-todo-list`: one item's number, status and words."""

    id: int
    status: Literal["todo", "in-progress", "done"]
    text: str


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


# Its system-prompt section (ActionSpec.guide); docs/PROMPT.md maps the kit's rules to it.
_TODO = """Keep a todo list for work with several steps.
- When a new task arrives, add one item per step (a new id each, status `todo`), then start the
  first step in the same reply: a plan alone does nothing.
- Move items to `in-progress` and `done` as you go (same id, new status).
- Never add an item that waits for the user to do something; if you need something from them, say
  so with `message`."""

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
