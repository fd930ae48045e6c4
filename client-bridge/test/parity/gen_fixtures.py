"""Writes verbs.json: action scripts and the page the Python reference computes after each.

A script may use a layout verb (move, resize, align, ...): it is written as what the steward
sends for it, the `update_shape` records it changes on the mirror (`diff_ops`, the arrange
actions' own path), since layout verbs are not on the wire.

Run from the repo root: `uv run python client-bridge/test/parity/gen_fixtures.py`.
The vitest parity test applies the same scripts in a real tldraw Editor and compares;
tests/unit/test_executor_parity.py checks that verbs.json is what this script writes now
and runs the scripts through the bridge's executor in Node against a fresh reference.
"""

import json
import math
from pathlib import Path

from steward.actions.arrange.mirror_diff import diff_ops
from steward.actions.base import RunState
from steward.actions.registry import ACTIONS, process
from steward.canvas.apply import LAYOUT_VERBS, apply_wire_action
from steward.protocol.messages import WireAction


def geo(i, x, y, w=100, h=50, **props):
    return {
        "id": i,
        "type": "geo",
        "x": x,
        "y": y,
        "props": {"geo": "rectangle", "w": w, "h": h, "color": "blue", "text": "", **props},
    }


# The ring draw-pen.test.ts checks in the browser: twelve points on an ellipse.
RING = [
    {"x": 500 + 120 * math.cos(k * math.pi / 6), "y": 300 + 80 * math.sin(k * math.pi / 6)}
    for k in range(12)
]


def pen(shape_id, points, **fields):
    """The wire record a model's `pen` action becomes (the steward smooths it)."""
    action = {"_type": "pen", "shapeId": shape_id, "points": points, **fields}
    out = process(
        action,
        index=0,
        complete=True,
        incomplete_path=None,
        ctx=RunState(shapes={}),
        enabled=ACTIONS,
    )
    assert out is not None
    return out.ops[0].params


SCRIPTS = {
    "create_update_delete": [
        ("create_shape", geo("a", 0, 0, text="Alpha")),
        ("create_shape", geo("b", 300, 40, 120, 80)),
        (
            "create_shape",
            {
                "id": "n",
                "type": "note",
                "x": 600,
                "y": 0,
                "props": {"color": "yellow", "text": "note", "scale": 1},
            },
        ),
        (
            "create_shape",
            {
                "id": "t",
                "type": "text",
                "x": 0,
                "y": 300,
                "props": {"text": "hello", "color": "black", "size": "m", "autoSize": True},
            },
        ),
        (
            "create_shape",
            {
                "id": "arr",
                "type": "arrow",
                "x": 100,
                "y": 25,
                "bindings": {"start": "a", "end": "b"},
                "props": {"start": {"x": 0, "y": 0}, "end": {"x": 200, "y": 40}, "color": "red"},
            },
        ),
        (
            "create_shape",
            {
                "id": "ln",
                "type": "line",
                "x": 0,
                "y": 500,
                "props": {
                    "points": [{"x": 0, "y": 0}, {"x": 50, "y": 20}, {"x": 100, "y": 0}],
                    "color": "green",
                },
            },
        ),
        (
            "create_shape",
            {
                "id": "dr",
                "type": "draw",
                "x": 300,
                "y": 500,
                "props": {
                    "segments": [
                        {
                            "type": "free",
                            "points": [{"x": 0, "y": 0}, {"x": 10, "y": 5}, {"x": 20, "y": 0}],
                        }
                    ],
                    "color": "violet",
                },
            },
        ),
        ("update_shape", {"id": "a", "x": 20, "props": {"color": "red", "text": "Beta"}}),
        ("update_shape", {"id": "missing", "x": 5}),
        ("create_shape", geo("a", 20, 0, 150, 60, text="Replaced")),
        ("delete_shape", {"ids": ["b", "missing"]}),
    ],
    "transforms": [
        ("create_shape", geo("a", 0, 0)),
        ("create_shape", geo("b", 200, 100, 80, 80)),
        (
            "create_shape",
            {
                "id": "n",
                "type": "note",
                "x": 400,
                "y": 0,
                "props": {"color": "yellow", "text": "", "scale": 1},
            },
        ),
        ("move", {"ids": ["a", "b"], "dx": 10, "dy": -20}),
        ("resize", {"ids": ["b", "n"], "scaleX": 2, "scaleY": 0.5, "originX": 200, "originY": 100}),
        ("rotate", {"ids": ["a"], "angle": math.pi / 2, "originX": 0, "originY": 0}),
        ("rotate", {"ids": ["a"], "angle": -math.pi / 4, "originX": 50, "originY": 50}),
    ],
    "flips": [
        ("create_shape", geo("a", 0, 0, 120, 60, geo="arrow-right")),
        ("create_shape", geo("b", 200, 100, 80, 40, geo="rhombus")),
        (
            "create_shape",
            {
                "id": "n",
                "type": "note",
                "x": 400,
                "y": 0,
                "props": {"color": "yellow", "text": "", "scale": 1},
            },
        ),
        (
            "create_shape",
            {
                "id": "ln",
                "type": "line",
                "x": 0,
                "y": 300,
                "props": {
                    "points": [{"x": 0, "y": 0}, {"x": 60, "y": 30}, {"x": 100, "y": 0}],
                    "color": "green",
                },
            },
        ),
        ("resize", {"ids": ["a", "ln"], "scaleX": -1, "scaleY": 1, "originX": 60, "originY": 0}),
        ("resize", {"ids": ["b", "n"], "scaleX": 1, "scaleY": -0.5, "originX": 0, "originY": 100}),
        ("rotate", {"ids": ["a"], "angle": math.pi / 6, "originX": 0, "originY": 0}),
        ("resize", {"ids": ["a"], "scaleX": -2, "scaleY": 1, "originX": 50, "originY": 50}),
        ("resize", {"ids": ["a", "b"], "scaleX": -1, "scaleY": -1, "originX": 0, "originY": 0}),
    ],
    "layout": [
        ("create_shape", geo("a", 0, 0, 100, 50)),
        ("create_shape", geo("b", 150, 80, 60, 60)),
        ("create_shape", geo("c", 400, 30, 40, 100)),
        ("align", {"ids": ["a", "b", "c"], "alignment": "top"}),
        ("align", {"ids": ["a", "b", "c"], "alignment": "center-horizontal"}),
        ("distribute", {"ids": ["a", "b", "c"], "direction": "vertical"}),
        ("stack", {"ids": ["a", "b", "c"], "direction": "horizontal", "gap": 16}),
        ("align", {"ids": ["a", "b", "c"], "alignment": "bottom"}),
        ("align", {"ids": ["a", "b", "c"], "alignment": "right"}),
        ("align", {"ids": ["a", "b", "c"], "alignment": "center-vertical"}),
        ("distribute", {"ids": ["a", "b", "c"], "direction": "horizontal"}),
        ("stack", {"ids": ["c", "a", "b"], "direction": "vertical", "gap": 8}),
        ("align", {"ids": ["a", "b"], "alignment": "left"}),
    ],
    "order": [
        ("create_shape", geo("a", 0, 0)),
        ("create_shape", geo("b", 200, 0)),
        ("create_shape", geo("c", 400, 0)),
        ("create_shape", geo("d", 600, 0)),
        ("reorder", {"ids": ["a"], "to": "front"}),
        ("reorder", {"ids": ["d"], "to": "back"}),
        ("reorder", {"ids": ["b"], "to": "forward"}),
        ("reorder", {"ids": ["a"], "to": "backward"}),
        ("reorder", {"ids": ["d", "a"], "to": "behind", "target": "c"}),
        ("reorder", {"ids": ["b"], "to": "in_front", "target": "c"}),
        ("reorder", {"ids": ["c"], "to": "in_front", "target": "gone"}),
        ("move", {"ids": ["b", "c"], "dx": 30, "dy": 40}),
        (
            "resize",
            {"ids": ["b", "c"], "scaleX": 1.5, "scaleY": 1.5, "originX": 230, "originY": 40},
        ),
        ("delete_shape", {"ids": ["a", "d"]}),
    ],
    "pens": [
        # A straight polyline in one segment is held as one straight segment per edge.
        (
            "create_shape",
            {
                "id": "rail",
                "type": "draw",
                "x": 45,
                "y": 305,
                "props": {
                    "segments": [
                        {
                            "type": "straight",
                            "points": [
                                {"x": 0, "y": 0},
                                {"x": 360, "y": 0},
                                {"x": 360, "y": 380},
                                {"x": 0, "y": 380},
                            ],
                        }
                    ],
                    "isPen": True,
                },
            },
        ),
        (
            "create_shape",
            {
                "id": "wave",
                "type": "draw",
                "x": 0,
                "y": 0,
                "props": {
                    "segments": [
                        {
                            "type": "free",
                            "points": [{"x": i, "y": (i * 7) % 50} for i in range(120)],
                        }
                    ],
                },
            },
        ),
        (
            "update_shape",
            {
                "id": "wave",
                "props": {
                    "segments": [
                        {
                            "type": "straight",
                            "points": [{"x": 0, "y": 0}, {"x": 40, "y": 30}, {"x": 80, "y": 0}],
                        }
                    ]
                },
            },
        ),
        ("resize", {"ids": ["rail"], "scaleX": 0.5, "scaleY": 2, "originX": 45, "originY": 305}),
    ],
    "smooth_ring": [
        ("create_shape", pen("ring", RING, closed=True, style="smooth", fill="tint")),
    ],
}


def wire_steps(shapes, verb, params):
    """A wire verb as it is; a layout verb as the `update_shape` ops the steward sends."""
    if verb not in LAYOUT_VERBS:
        return [(verb, params)]
    return [(op.name, op.params) for op in diff_ops(RunState(shapes=shapes), verb, params)]


def frames() -> dict:
    """Each script's wire actions, with the page the reference computes after each."""
    out = {}
    for name, steps in SCRIPTS.items():
        shapes: dict = {}
        script = []
        for verb, params in steps:
            for sent, sent_params in wire_steps(shapes, verb, params):
                action = WireAction(id=f"{name}-{len(script)}", name=sent, params=sent_params)
                apply_wire_action(shapes, action)
                script.append(
                    {
                        "action": action.model_dump(mode="json"),
                        "page": json.loads(json.dumps(list(shapes.values()))),
                    }
                )
        out[name] = script
    return out


def render() -> str:
    """verbs.json as this script writes it."""
    return json.dumps(frames(), indent=1) + "\n"


FIXTURES = Path(__file__).with_name("verbs.json")


def main() -> None:
    FIXTURES.write_text(render())
    print(f"wrote {FIXTURES}")


if __name__ == "__main__":
    main()
