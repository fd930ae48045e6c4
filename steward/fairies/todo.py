"""Todo-list helpers for the request loop."""

from __future__ import annotations

from steward.actions.base import TodoItem


def unfinished(todo: list[TodoItem]) -> list[TodoItem]:
    return [t for t in todo if t.status != "done"]
