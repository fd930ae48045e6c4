"""A working fairy's neighbours: which shapes around its task area it is shown, and how."""

from __future__ import annotations

import json
from typing import Any

from steward.canvas.coords import CoordinateSpace
from steward.fairies.modes import MODES
from steward.fairies.neighbours import neighbourhood_of
from steward.fairies.project_task import Task
from steward.ports import Picture
from steward.prompt.parts.neighbours import PART, adjoining, around, surroundings
from steward.prompt.registry import build_request
from steward.prompt.state import PromptState
from steward.protocol.box import Box


def _box(
    sid: str, x: float, y: float, w: float = 40, h: float = 40, **props: Any
) -> dict[str, Any]:
    return {
        "id": sid,
        "type": "geo",
        "x": x,
        "y": y,
        "props": {"geo": "rectangle", "w": w, "h": h, **props},
    }


MINE = Task(
    "t1", "room", "The barn", "a red barn", "in-progress", "p", "fairy-2", Box(400, 0, 300, 300)
)
LEFT = Task(
    "t0", "room", "The fence", "a fence", "in-progress", "p", "fairy-1", Box(80, 0, 340, 300)
)
FAR = Task("t9", "room", "The pond", "a pond", "todo", "p", None, Box(5000, 5000, 300, 300))
SHAPES = {
    s["id"]: s
    for s in (
        _box("t0-post", 350, 100, text="post"),  # in the fence's area, 10 px from the barn's
        _box("t0-rail", 420, 320, w=30),  # outside every area, 20 px below the barn's
        _box("t0-gate", 250, 100),  # in the fence's area but 110 px away: does not adjoin
        _box("t1-wall", 450, 50),  # inside the drone's own area: not a neighbour
        _box("far-away", 3000, 3000),  # beyond the margin
    )
}


# Who drew what: the fence's drone drew its post and rail; the gate-side box beside the
# barn was drawn by a person, though it lies in the fence's area.
MADE_BY = {"t0-post": "t0", "t0-rail": "t0", "t0-gate": "t0", "t1-wall": "t1"}


def test_neighbours_are_the_shapes_around_the_area_with_the_task_that_drew_them() -> None:
    hood = neighbourhood_of(MINE, [LEFT, MINE, FAR], MADE_BY)
    assert hood is not None and hood.area == MINE.bounds
    assert [t.id for t in hood.tasks] == ["t0", "t9"]  # its own task is not a neighbour
    seen = surroundings(SHAPES, hood, CoordinateSpace(100, 0))
    assert [s["shapeId"] for s in seen.shapes] == ["t0-post", "t0-rail"]
    post, rail = seen.shapes
    # BlurryShape rows in the model's coordinates, with the task that drew them.
    assert post == {
        "shapeId": "t0-post",
        "type": "rectangle",
        "x": 250,
        "y": 100,
        "w": 40,
        "h": 40,
        "text": "post",
        "task": "t0",
    }
    assert rail["task"] == "t0"  # drawn by the fence's drone, though outside every area
    # A person's shape in the fence's area is not credited to the fence.
    user_box = _box("note", 360, 200)
    rows = surroundings({**SHAPES, "note": user_box}, hood, CoordinateSpace(100, 0)).shapes
    assert next(r for r in rows if r["shapeId"] == "note")["task"] is None
    assert [t["id"] for t in seen.tasks] == ["t0"]  # the pond is too far to matter
    assert seen.tasks[0]["bounds"] == {"x": -20, "y": 0, "w": 340, "h": 300}


def test_the_neighbour_list_is_capped_and_says_how_many_were_left_out() -> None:
    hood = neighbourhood_of(MINE, [LEFT])
    assert hood is not None
    many = {f"n{k}": _box(f"n{k}", 400 + 3 * k, 310 + k % 30) for k in range(80)}
    seen = surroundings(many, hood, CoordinateSpace(0, 0), cap=60)
    assert len(seen.shapes) == 60 and seen.more == 20


def test_no_task_area_no_neighbourhood() -> None:
    assert neighbourhood_of(None, [LEFT]) is None
    assert neighbourhood_of(Task("t", "room", "x", "y"), [LEFT]) is None


def test_a_drones_request_lists_its_neighbours_and_the_part_is_in_its_mode() -> None:
    assert PART.name in MODES["working-drone"].parts
    assert PART.name not in MODES["one-shotting"].parts
    state = PromptState(
        message="draw the barn",
        shapes=SHAPES,
        viewport=MINE.bounds,  # type: ignore[arg-type]
        coords=CoordinateSpace(0, 0),
        enabled_actions=MODES["working-drone"].actions,
        mode="working-drone",
        neighbourhood=neighbourhood_of(MINE, [LEFT, MINE]),
    )
    req = build_request(state, MODES["working-drone"])
    block = next(b["text"] for b in req.user if b["text"].startswith("Around your task area"))
    rows = json.loads(block.split("Shapes within 45 px of your area:\n", 1)[1])
    assert [r["shapeId"] for r in rows] == ["t0-post", "t0-rail"]
    assert '"title":"The fence"' in block


def test_only_shapes_within_the_adjoining_margin_are_listed() -> None:
    # The margin is 15% of the area's shorter side, within [40, 120] px.
    assert adjoining(Box(0, 0, 300, 300)) == Box(-45, -45, 390, 390)
    assert adjoining(Box(0, 0, 100, 900)) == Box(-40, -40, 180, 980)
    assert adjoining(Box(0, 0, 2000, 2000)) == Box(-120, -120, 2240, 2240)
    hood = neighbourhood_of(MINE, [LEFT])
    assert hood is not None
    seen = surroundings(SHAPES, hood, CoordinateSpace(0, 0))
    assert "t0-gate" not in [s["shapeId"] for s in seen.shapes]


def _drone_state(**kw: Any) -> PromptState:
    return PromptState(
        message="draw the barn",
        shapes=SHAPES,
        viewport=MINE.bounds,  # type: ignore[arg-type]
        coords=CoordinateSpace(100, 0),
        enabled_actions=MODES["working-drone"].actions,
        mode="working-drone",
        neighbourhood=neighbourhood_of(MINE, [LEFT, MINE, FAR]),
        **kw,
    )


def test_the_image_around_the_task_area_follows_its_truthful_caption() -> None:
    assert MINE.bounds is not None
    area = around(MINE.bounds)  # 300 px grown by max(200, 225) on each side
    assert area == Box(175, -225, 750, 750)
    pic = Picture(area, b"RIFFwebp", "image/webp")
    req = build_request(_drone_state(around=pic), MODES["working-drone"])
    images = [b for b in req.user if b["type"] == "image"]
    assert images == [{"type": "image", "media_type": "image/webp", "data": b"RIFFwebp"}]
    at = req.user.index(images[0])
    caption = req.user[at - 1]["text"]
    # Model coordinates (origin x=100), the pixel size the browser renders it at, and what
    # is in it: its own area in the middle, the fence's task (the pond's is far away).
    assert "this image shows x 75 to 825, y -225 to 525" in caption
    assert "about 512x512 px" in caption and "low detail" in caption
    assert "(x=300, y=0, w=300, h=300) lies within it" in caption
    # The task areas it claims are named with where they are, in the request's frame.
    assert '"The fence" (t0, in-progress) at x=-20, y=0, w=340, h=300' in caption
    assert "t9" not in caption
    # Without the image (no browser rendered it), no caption claims one.
    plain = build_request(_drone_state(), MODES["working-drone"])
    assert not any(b["type"] == "image" for b in plain.user)
    assert not any("this image shows" in b.get("text", "") for b in plain.user)


def test_the_caption_says_what_the_first_image_shows_in_a_review() -> None:
    """In a review the first image shows the area reviewed, not the task area: the caption
    of the image around says so instead of "your first image shows that in full"."""
    assert MINE.bounds is not None
    area = around(MINE.bounds)
    pic = Picture(Box(x=area.x, y=area.y, w=area.w, h=area.h), b"RIFFwebp", "image/webp")
    task = build_request(_drone_state(around=pic, view_kind="task"), MODES["working-drone"])
    review = build_request(_drone_state(around=pic, view_kind="review"), MODES["working-drone"])

    def caption(req: Any) -> str:
        return next(b["text"] for b in req.user if "this image shows" in b.get("text", ""))

    assert "your first image shows that area in full" in caption(task)
    said = caption(review)
    assert "that area in full" not in said
    assert "your first image shows the area you asked to review (your viewport)" in said
    assert 'outlined with grey dashes and tagged "your task"' in said


def test_shapes_in_view_drawn_by_another_task_say_which() -> None:
    """A drone's own list of shapes in view tagged none of the others' shapes, while the list
    next to its area did: a ground under the shops is the ground task's, in both."""
    hood = neighbourhood_of(MINE, [LEFT, MINE], {"t0-post": "t0"})
    state = _drone_state()
    state.neighbourhood = hood
    state.viewport = Box(0, 0, 700, 300)
    req = build_request(state, MODES["working-drone"])
    block = next(b["text"] for b in req.user if b["text"].startswith("Shapes in your view"))
    rows = {r["shapeId"]: r for r in json.loads(block.split(":\n", 1)[1])}
    assert rows["t0-post"]["task"] == "t0"
    assert all("task" not in r for sid, r in rows.items() if sid != "t0-post")
