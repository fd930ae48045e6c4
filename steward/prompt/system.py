"""The system prompt, assembled from sections; each section names what it needs enabled."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable

from steward.actions.registry import select
from steward.prompt.schema import response_schema

# (title, needed actions (any of), needed parts (any of), body). Empty tuples: always.
SECTIONS: tuple[tuple[str, tuple[str, ...], tuple[str, ...], str], ...] = (
    ("Role", (), (),
     "You are an AI agent that edits a shared tldraw canvas for everyone in the room. You "
     "answer with JSON only: an object with an `actions` array, each action an object with a "
     "`_type`. Actions are applied live, in order, while you write them."),
    ("Canvas", (), (),
     "Coordinates are like a web page: x grows to the right, y grows downward; x and y are "
     "the top-left corner of a shape (arrows and lines use x1, y1, x2, y2). Numbers are "
     "integers relative to your chat's origin."),
    ("What you see", (), ("screenshot",),
     "You get a screenshot of your viewport. Trust it most for overlaps and layout."),
    ("Shapes in view", (), ("blurry_shapes",),
     "Shapes in your viewport are listed briefly (id, type, box, text)."),
    ("Shapes elsewhere", (), ("peripheral_clusters",),
     "Shapes outside your viewport are summarised as clusters (bounds and count)."),
    ("Selected shapes", (), ("selected_shapes",),
     "Shapes the user selected are given in full detail; 'this' or 'these' usually means them."),
    ("Creating shapes", ("create",), (),
     "Give every new shape a short unique shapeId. Labelled boxes in diagrams should be at "
     "least 200 px wide; label text is about 24 px tall and 12 px per character. Use `note` "
     "to say what a shape is for. Never create `unknown` shapes."),
    ("Arrows", ("create",), (),
     "Connect arrows with fromId and toId. `bend` curves an arrow (pixels from the straight "
     "line; positive bends right). Do not draw the same connection twice."),
    ("Moving", ("move",), (), "Always move shapes with `move`, never with `update`."),
    ("Layout", ("align", "distribute", "stack", "place"), (),
     "Prefer `align`, `distribute`, `stack` and `place` for arranging: they are exact."),
    ("Planning", ("update-todo-list",), (),
     "For larger tasks, write a todo list first with `update-todo-list`, then do it, marking "
     "items in-progress and done."),
    ("Thinking", ("think",), (),
     "Use `think` to reason; the user does not see it, so never answer with thoughts only."),
    ("Reviewing", ("review",), (),
     "After several changes, `review` the area you worked in (x, y, w, h with padding); you "
     "will get a fresh look and can fix problems. Do not review single simple edits."),
    ("Navigating", ("setMyView",), (),
     "`setMyView` moves your viewport; send nothing after it and wait for the new view."),
    ("Talking", ("message",), (),
     "Finish with a short `message` telling the user what you did."),
    ("Colours", ("create", "update", "pen"), (),
     "Colours: black, grey, light-violet, violet, blue, light-blue, yellow, orange, green, "
     "light-green, light-red, red, white. Fills: none, tint, background, solid, pattern. For "
     "white shapes use fill `background` with colour `grey`."),
)  # fmt: skip


def system_prompt(actions: Iterable[str], parts: Iterable[str], mode: str) -> str:
    return _system_prompt(tuple(actions), frozenset(parts), mode)


# Building the response schema with pydantic costs ~70 ms of CPU; every request of every
# room asked for it again (the largest steward-side cost in the 50-room profile).
@functools.lru_cache(maxsize=64)
def _system_prompt(actions: tuple[str, ...], parts: frozenset[str], mode: str) -> str:
    enabled = set(select(actions))
    part_set = set(parts)
    out = [f"# Canvas agent ({mode})"]
    for title, need_actions, need_parts, body in SECTIONS:
        if need_actions and not enabled.intersection(need_actions):
            continue
        if need_parts and not part_set.intersection(need_parts):
            continue
        out.append(f"## {title}\n{body}")
    specs = select(actions).values()
    out.append("## Actions\n" + "\n".join(f"- {s.prompt}" for s in specs))
    out.append(
        "## Response JSON schema\n"
        + json.dumps(response_schema(enabled), sort_keys=True, separators=(",", ":"))
    )
    return "\n\n".join(out)
