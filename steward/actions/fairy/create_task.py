"""`create-task`: create a task for yourself (optionally with an area)."""

from __future__ import annotations

from typing import Any

from steward.actions.base import ActionModel
from steward.actions.fairy.field_values import area_field, text_field
from steward.actions.fairy.spec import fairy_spec
from steward.actions.fairy_port import FairyPort


class SoloTask(ActionModel):
    """What a solo fairy writes for `create-task`: a task of its own, with an optional area to work
    in."""

    taskId: str
    title: str
    text: str
    x: float | None = None
    y: float | None = None
    w: float | None = None
    h: float | None = None


def _create_solo_task(fairy: FairyPort, data: dict[str, Any]) -> None:
    area = area_field(data) if all(data.get(k) is not None for k in "xywh") else None
    fairy.board.create_solo_task(
        fairy.fairy_id,
        title=text_field(data, "title"),
        text=text_field(data, "text"),
        bounds=area,
        task_id=text_field(data, "taskId") or None,
    )


# Its system-prompt section (ActionSpec.guide); docs/PROMPT.md maps the kit's rules to it.
_CREATE_TASK = """Split the request into tasks for yourself: a short id, a title, what to do, and
optionally the canvas area (x, y, w, h) it covers. Then start the first with `start-task`."""

CREATE_TASK = fairy_spec(
    "create-task",
    schema=SoloTask,
    description="Create a task for yourself (optionally with an area).",
    guide=_CREATE_TASK,
    effect=_create_solo_task,
    plans=True,
)
