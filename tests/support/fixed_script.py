"""A test fixture: a fixed, realistic action script behind the `AgentRunner` interface.

Room tests run it in place of the agent so the transport sees a known stream: it asks for
context, then streams a small flow chart (three boxes, two arrows, a title) with partial
updates through the `SessionPort`, like a model streaming its actions, and ends with a chat message.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from steward.ports import CanvasSnapshot, PromptInput, SessionPort
from steward.protocol.messages import WireAction

_GEO_DEFAULTS: dict[str, Any] = {
    "labelColor": "black",
    "fill": "semi",
    "dash": "draw",
    "size": "m",
    "font": "draw",
    "align": "middle",
    "verticalAlign": "middle",
    "growY": 0,
}


Step = tuple[list[WireAction], bool]  # actions of one `send_actions` call, partial?


def flow_chart(prefix: str, origin_x: float = 100, origin_y: float = 100) -> list[Step]:
    """The script as steps; a box's text streams in as partial versions, then the final one."""
    labels = ["Sign up", "Verify email", "Welcome"]
    colors = ["blue", "violet", "green"]
    steps: list[Step] = []
    box_ids = [f"{prefix}-box{i}" for i in range(3)]
    for i, (label, color) in enumerate(zip(labels, colors, strict=True)):
        x, y = origin_x + i * 300, origin_y
        for n in range(1, len(label) + 1, 3):  # text streams in, as from a model
            props = {**_GEO_DEFAULTS, "geo": "rectangle", "w": 200, "h": 100, "color": color}
            props["text"] = label[:n]
            action = WireAction(
                id=f"{prefix}-a{i}",
                name="create_shape",
                params={"id": box_ids[i], "type": "geo", "x": x, "y": y, "props": props},
            )
            steps.append(([action], True))
        props = {**_GEO_DEFAULTS, "geo": "rectangle", "w": 200, "h": 100, "color": color}
        props["text"] = label
        action = WireAction(
            id=f"{prefix}-a{i}",
            name="create_shape",
            params={"id": box_ids[i], "type": "geo", "x": x, "y": y, "props": props},
        )
        steps.append(([action], False))
    arrows = []
    for i in range(2):
        x0 = origin_x + i * 300 + 200
        arrows.append(
            WireAction(
                id=f"{prefix}-arrow{i}",
                name="create_shape",
                params={
                    "id": f"{prefix}-arrow{i}",
                    "type": "arrow",
                    "x": x0,
                    "y": origin_y + 50,
                    "bindings": {"start": box_ids[i], "end": box_ids[i + 1]},
                    "props": {
                        "start": {"x": 0, "y": 0},
                        "end": {"x": 100, "y": 0},
                        "bend": 0,
                        "color": "black",
                        "arrowheadStart": "none",
                        "arrowheadEnd": "arrow",
                        "dash": "draw",
                        "size": "m",
                        "text": "",
                    },
                },
            )
        )
    steps.append((arrows, False))
    steps.append(
        (
            [
                WireAction(
                    id=f"{prefix}-title",
                    name="create_shape",
                    params={
                        "id": f"{prefix}-title",
                        "type": "text",
                        "x": origin_x,
                        "y": origin_y - 80,
                        "props": {
                            "text": "Signup flow",
                            "color": "black",
                            "size": "l",
                            "font": "draw",
                            "textAlign": "start",
                            "w": 300,
                            "autoSize": True,
                            "scale": 1,
                        },
                    },
                ),
                WireAction(
                    id=f"{prefix}-move",
                    name="update_shape",
                    params={"id": f"{prefix}-title", "y": origin_y - 90},
                ),
            ],
            False,
        )
    )
    return steps


class FixedScriptRunner:
    """`AgentRunner` that plays `flow_chart` with a small delay between steps."""

    def __init__(
        self, step_delay_s: float = 0.01, ask_context: bool = True, context_every: int = 0
    ) -> None:
        self.step_delay_s = step_delay_s
        self.ask_context = ask_context
        # Ask for fresh context every N steps, like an agent's follow-up requests.
        self.context_every = context_every
        self.contexts: list[CanvasSnapshot] = []

    async def run(self, session: SessionPort, prompt: PromptInput) -> str:
        if self.ask_context:
            ctx = await session.request_context(bounds=prompt.bounds)
            self.contexts.append(ctx)
            origin_y = 100.0 + 200.0 * _rows_used(ctx.shapes)
        else:
            origin_y = 100.0
        await session.send_status("calling_model")
        await session.send_status("streaming")
        prefix = f"fx{uuid.uuid4().hex[:6]}"
        for n, (actions, partial) in enumerate(flow_chart(prefix, origin_y=origin_y), 1):
            if session.cancelled():
                return "canceled"
            if self.context_every and n % self.context_every == 0:
                await session.send_status("waiting_context")
                self.contexts.append(await session.request_context(bounds=prompt.bounds))
            await session.send_actions(actions, partial=partial)
            await asyncio.sleep(self.step_delay_s)
        await session.send_chat("I drew the signup flow: three steps joined by arrows.")
        return "done"


def _rows_used(shapes: list[dict[str, Any]]) -> int:
    """Place each run below what is already on the canvas, so runs do not overlap."""
    ys = [float(s.get("y") or 0) for s in shapes if isinstance(s, dict)]
    return 0 if not ys else int((max(ys) + 80) // 200) + 1
