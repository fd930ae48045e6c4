"""Starting and finishing the task a fairy works itself (solo, duo and drone variants)."""

from __future__ import annotations

from typing import Any

from steward.actions.fairy.field_values import text_field
from steward.actions.fairy_port import ActionEffect, FairyPort, ModeName


def start_own_task(working: ModeName) -> ActionEffect:
    """Start one of the fairy's own tasks and work it in `working` mode."""

    def effect(fairy: FairyPort, data: dict[str, Any]) -> None:
        task = fairy.board.start_own_task(fairy.fairy_id, text_field(data, "taskId"))
        fairy.switch_mode(working, f'Work on your task "{task.id}": {task.text}')
        fairy.end_turn()

    return effect


def mark_done(back: ModeName) -> ActionEffect:
    """Finish the fairy's current task, tell whoever waits, go back to `back` mode."""

    def effect(fairy: FairyPort, data: dict[str, Any]) -> None:
        task = fairy.board.mark_done(fairy.fairy_id)
        fairy.remember_task_end(task, back)
        fairy.notify_task_done(task.id)
        fairy.switch_mode(back)
        fairy.end_turn()

    return effect
