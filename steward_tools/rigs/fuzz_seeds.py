"""Valid examples of every inbound input: where the fuzzers' mutations start.

Shared by the in-process fuzzer (`fuzz.py`) and the live one (`fuzz_live.py`), which would
otherwise import each other.
"""

from __future__ import annotations

from typing import Any

from steward.protocol.messages import (
    Ack,
    CancelRequest,
    CanvasEdit,
    ComposingHint,
    ContextReply,
    PromptRequest,
    Resync,
    ViewportUpdate,
    WireModel,
)

# Valid examples of every inbound message, the starting points for mutation.
SEEDS: dict[type[WireModel], list[dict[str, Any]]] = {
    Ack: [{"sessionId": "s1", "seq": 3, "applied": ["s1.0.1", "s1.0.2"], "appliedAt": 1.7e12}],
    Resync: [{"sessionId": "s1", "lastSeq": 4}, {"sessionId": "*", "lastSeq": 0}],
    ViewportUpdate: [
        {"viewport": {"x": 0, "y": 0, "w": 1280, "h": 800}, "selection": ["a"], "ts": 1.0}
    ],
    PromptRequest: [
        {"message": "draw a flow chart of our signup"},
        {
            "message": "align these",
            "bounds": {"x": 1, "y": 2, "w": 3, "h": 4},
            "selection": ["a", "b"],
            "fairy": "f1",
        },
    ],
    CancelRequest: [{"sessionId": "s1"}],
    ComposingHint: [{"ts": 1.0}, {"bounds": {"x": 0, "y": 0, "w": 1280, "h": 800}, "ts": 2.5}],
    ContextReply: [
        {
            "requestId": "r1",
            "viewport": {"x": 0, "y": 0, "w": 1280, "h": 800},
            "selection": [],
            "docVersion": 3,
            "counts": {"shapes": 2, "inBounds": 1},
            "streams": ["screenshot", "shapes"],
        },
    ],
    CanvasEdit: [
        {
            "put": [
                {
                    "id": "shape:a",
                    "type": "geo",
                    "x": 10,
                    "y": 20,
                    "rotation": 0,
                    "props": {"geo": "rectangle", "w": 100, "h": 50, "color": "blue"},
                }
            ],
            "remove": ["shape:b"],
        },
    ],
}
# A valid `agent:context` shapes list (a geo, a note, an arrow).
SHAPE_SEEDS: list[Any] = [
    [
        {
            "id": "shape:a",
            "type": "geo",
            "x": 0,
            "y": 0,
            "rotation": 0,
            "props": {"geo": "ellipse", "w": 80, "h": 80, "text": "hi"},
        },
        {"id": "shape:n", "type": "note", "x": 200, "y": 0, "props": {"text": "note"}},
        {
            "id": "shape:r",
            "type": "arrow",
            "x": 0,
            "y": 0,
            "props": {"start": {"x": 0, "y": 0}, "end": {"x": 10, "y": 10}},
        },
    ],
]
