"""Starting and finishing the task a fairy works itself (solo, duo and drone variants)."""

from __future__ import annotations

from typing import Any

from steward.actions.agent import ActionEffect, FairyAgent, ModeName
from steward.actions.fairy.field_values import text_field


def start_own_task(working: ModeName) -> ActionEffect:
    """Start one of the fairy's own tasks and work it in `working` mode."""

    def effect(agent: FairyAgent, data: dict[str, Any]) -> None:
        task = agent.board.start_own_task(agent.fairy_id, text_field(data, "taskId"))
        agent.switch_mode(working, f'Work on your task "{task.id}": {task.text}')
        agent.end_turn()

    return effect


def mark_done(back: ModeName) -> ActionEffect:
    """Finish the fairy's current task, tell whoever waits, go back to `back` mode."""

    def effect(agent: FairyAgent, data: dict[str, Any]) -> None:
        task = agent.board.mark_done(agent.fairy_id)
        agent.remember_task_end(task, back)
        agent.notify_task_done(task.id)
        agent.switch_mode(back)
        agent.end_turn()

    return effect
