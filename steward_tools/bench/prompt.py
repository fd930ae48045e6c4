"""`steward bench prompt`: prompt size for a 1,000-shape canvas vs sending every shape.

Naive = the same system prompt plus every shape as SimpleShape JSON. Ours = the full prompt
the one-shot agent would send (blurry shapes in view, clusters outside, lints, ...).
"""

from __future__ import annotations

import argparse
import json
import random
from typing import Any

from steward.canvas.coords import CoordinateSpace
from steward.canvas.simple import to_simple
from steward.commands.setup import print_json
from steward.fairies.modes import MODES
from steward.model.base import estimate_tokens
from steward.prompt.registry import build_request
from steward.prompt.state import PromptState
from steward.protocol.box import Box


def canvas(n: int, seed: int = 7) -> dict[str, dict[str, Any]]:
    """A board of labelled boxes, notes and arrows spread over ~12,000 × 9,000 px."""
    rnd = random.Random(seed)
    shapes: dict[str, dict[str, Any]] = {}
    for i in range(n):
        x, y = rnd.uniform(0, 12_000), rnd.uniform(0, 9_000)
        kind = i % 10
        if kind < 6:
            rec = {
                "id": f"box-{i}",
                "type": "geo",
                "x": x,
                "y": y,
                "rotation": 0.0,
                "props": {
                    "geo": "rectangle",
                    "w": rnd.uniform(120, 260),
                    "h": 100.0,
                    "color": "blue",
                    "fill": "semi",
                    "text": f"Item {i}",
                },
            }
        elif kind < 8:
            rec = {
                "id": f"note-{i}",
                "type": "note",
                "x": x,
                "y": y,
                "rotation": 0.0,
                "props": {"color": "yellow", "text": f"note {i}"},
            }
        else:
            rec = {
                "id": f"arrow-{i}",
                "type": "arrow",
                "x": x,
                "y": y,
                "rotation": 0.0,
                "props": {"start": {"x": 0, "y": 0}, "end": {"x": 150, "y": 40}},
                "bindings": {"start": None, "end": None},
            }
        shapes[rec["id"]] = rec  # type: ignore[index]
    return shapes


def run(n: int = 1000) -> dict[str, Any]:
    shapes = canvas(n)
    state = PromptState(
        message="tidy up the boxes in view",
        shapes=shapes,
        viewport=Box(4000, 3000, 1600, 900),
        coords=CoordinateSpace(4000, 3000),
        enabled_actions=MODES["one-shotting"].actions,
    )
    request = build_request(state, MODES["one-shotting"])
    ours = sum(estimate_tokens(s) for s in request.system) + sum(
        estimate_tokens(str(b.get("text", ""))) for b in request.user
    )
    naive_shapes = json.dumps([to_simple(s, shapes) for s in shapes.values()])
    naive = sum(estimate_tokens(s) for s in request.system) + estimate_tokens(naive_shapes)
    return {
        "shapes": n,
        "prompt_tokens": ours,
        "naive_tokens": naive,
        "ratio": round(ours / naive, 4),
    }


def _handler(args: argparse.Namespace) -> int:
    result = run(args.shapes)
    if args.json:
        print_json(result)
    else:
        print(
            f"{result['shapes']} shapes: {result['prompt_tokens']} vs "
            f"{result['naive_tokens']} tokens (ratio {result['ratio']})"
        )
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("prompt", help="prompt tokens vs naive SimpleShape JSON")
    p.add_argument("--json", action="store_true")
    p.add_argument("--shapes", type=int, default=1000)
    p.set_defaults(handler=_handler)
