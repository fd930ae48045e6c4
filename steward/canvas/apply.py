"""The reference implementation of the wire verbs on a map of shape records, and of the
layout verbs the steward previews on its mirror.

The steward's `CanvasMirror`, the Python headless client and (by translation) the browser
bridge apply wire actions exactly like this, so they all compute the same canvas. The full
spec is in docs/WIRE-VERBS.md; in short:

Shape record: ``{id, type, x, y, rotation, parentId?, bindings?, props{...}}`` with page
coordinates, ids without the ``shape:`` prefix, plain ``text`` props, arrow ``bindings`` as
``{start, end}`` shape ids, and the key order of the map as the z-order (back to front).

Params per wire verb (ids that do not exist are skipped):

- ``create_shape``  {id, type, x, y, rotation?, parentId?, bindings?, meta?, props}
- ``update_shape``  {id, type?, x?, y?, rotation?, parentId?, bindings?, meta?, props?}
  (props, meta and bindings merge key by key; a ``null`` prop/meta value removes the key)
- ``delete_shape``  {ids}  (descendants go too; arrow bindings to them become null)
- ``reorder``       {ids, to, target?}  front|back|forward|backward, or behind|in_front
  of the shape `target` (no change when it does not exist or is one of `ids`)
- ``set_viewport``  {x, y, w, h};  ``think`` {text};  ``todo`` {items:[{id,text,status}]};
  ``add_detail`` {text}  (no canvas change)

Layout verbs never go on the wire: an arrange action applies one to a copy of the mirror
(`apply_layout`) and sends what changed as ``update_shape`` (`actions/arrange/mirror_diff.py`),
so every browser gets records, not geometry to recompute:

- ``move``          {ids, dx, dy}
- ``resize``        {ids, scaleX, scaleY, originX, originY}
- ``rotate``        {ids, angle, originX, originY}  (radians, delta)
- ``align``         {ids, alignment}  left|center-horizontal|right|top|center-vertical|bottom
- ``distribute``    {ids, direction}  horizontal|vertical
- ``stack``         {ids, direction, gap}
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Iterable
from typing import Any, Literal

from steward.canvas import layout
from steward.canvas.bounds import local_box, num, rotate_point
from steward.canvas.draw import split_straight
from steward.protocol.messages import WireAction

Shape = dict[str, Any]
Shapes = dict[str, Shape]

# Verbs that never change the canvas.
UI_ONLY_VERBS = frozenset({"set_viewport", "think", "todo", "add_detail"})
# Verbs whose revert must also restore the z-order (they remove or reorder records).
ORDER_VERBS = frozenset({"delete_shape", "reorder"})


def _ids(params: dict[str, Any]) -> list[str]:
    raw = params.get("ids")
    if not isinstance(raw, list):
        return []
    return [i for i in dict.fromkeys(raw) if isinstance(i, str)]


def descendants(shapes: Shapes, ids: Iterable[str]) -> list[str]:
    """`ids` that exist plus every shape below them, each once, in map order."""
    wanted = {i for i in ids if i in shapes}
    if not wanted:
        return []
    children: dict[str, list[str]] = {}
    for sid, s in shapes.items():
        parent = s.get("parentId")
        if isinstance(parent, str):
            children.setdefault(parent, []).append(sid)
    stack = list(wanted)
    while stack:
        for kid in children.get(stack.pop(), ()):
            if kid not in wanted:
                wanted.add(kid)
                stack.append(kid)
    return [sid for sid in shapes if sid in wanted]


def affected_ids(shapes: Shapes, action: WireAction) -> list[str]:
    """Every record `action` may create, change or remove (for partial-action reverts)."""
    p: dict[str, Any] = action.params
    name = action.name
    if name in UI_ONLY_VERBS:
        return []
    if name in ("create_shape", "update_shape"):
        sid = p.get("id")
        return [sid] if isinstance(sid, str) else []
    ids = _ids(p)
    if name == "delete_shape":
        gone = descendants(shapes, ids)
        gone_set = set(gone)
        arrows = [
            sid
            for sid, s in shapes.items()
            if sid not in gone_set
            and isinstance(s.get("bindings"), dict)
            and gone_set.intersection(v for v in s["bindings"].values() if isinstance(v, str))
        ]
        return gone + arrows
    return descendants(shapes, ids)


def _translate(shape: Shape, dx: float, dy: float) -> None:
    shape["x"] = num(shape.get("x")) + dx
    shape["y"] = num(shape.get("y")) + dy


def _apply_deltas(shapes: Shapes, deltas: dict[str, tuple[float, float]]) -> None:
    for sid, (dx, dy) in deltas.items():
        if dx == 0 and dy == 0:
            continue
        for member in descendants(shapes, [sid]):
            _translate(shapes[member], dx, dy)


def _scale_point(p: Any, sx: float, sy: float) -> Any:
    if not isinstance(p, dict):
        return p
    out = dict(p)
    out["x"] = num(p.get("x")) * sx
    out["y"] = num(p.get("y")) * sy
    return out


# Geo kinds that are each other's mirror image, across a vertical and a horizontal axis.
_MIRROR_X = {"arrow-right": "arrow-left", "arrow-left": "arrow-right", "rhombus": "rhombus-2"}
_MIRROR_Y = {"arrow-up": "arrow-down", "arrow-down": "arrow-up", "rhombus": "rhombus-2"}
for _m in (_MIRROR_X, _MIRROR_Y):
    _m["rhombus-2"] = "rhombus"


def _resize_shape(s: Shape, sx: float, sy: float, ox: float, oy: float) -> None:
    """Scale about (ox, oy); a negative scale mirrors the shape across that axis (a flip)."""
    s["x"] = ox + (num(s.get("x")) - ox) * sx
    s["y"] = oy + (num(s.get("y")) - oy) * sy
    props = s.get("props")
    if not isinstance(props, dict):
        return
    kind = s.get("type")
    if kind == "note":
        props["scale"] = num(props.get("scale"), 1.0) * math.sqrt(abs(sx * sy))
    else:
        if "w" in props:
            props["w"] = num(props["w"]) * abs(sx)
        if "h" in props:
            props["h"] = num(props["h"]) * abs(sy)
    if kind == "arrow":
        for key in ("start", "end"):
            if key in props:
                props[key] = _scale_point(props[key], sx, sy)
    elif kind == "line" and isinstance(props.get("points"), list):
        props["points"] = [_scale_point(p, sx, sy) for p in props["points"]]
    elif kind == "draw" and isinstance(props.get("segments"), list):
        props["segments"] = [
            {**seg, "points": [_scale_point(p, sx, sy) for p in seg.get("points") or []]}
            if isinstance(seg, dict)
            else seg
            for seg in props["segments"]
        ]
    if sx < 0 or sy < 0:
        _flip(s, props, sx < 0, sy < 0)


def _flip(s: Shape, props: dict[str, Any], fx: bool, fy: bool) -> None:
    """Finish a mirrored resize. Point-based shapes are mirrored by their scaled points; a
    box keeps positive sizes, so its origin moves to the mirrored box's corner. One flip
    reverses the sense of a rotation."""
    angle = num(s.get("rotation"))
    if fx != fy:
        angle = -angle % (2 * math.pi)
        s["rotation"] = angle
    if s.get("type") not in ("arrow", "line", "draw"):
        _, _, w, h = local_box(s)
        cos, sin = math.cos(angle), math.sin(angle)
        if fx:
            s["x"] = num(s.get("x")) - w * cos
            s["y"] = num(s.get("y")) - w * sin
        if fy:
            s["x"] = num(s.get("x")) + h * sin
            s["y"] = num(s.get("y")) - h * cos
    if s.get("type") == "geo":
        geo = str(props.get("geo"))
        for flipped, mirror in ((fx, _MIRROR_X), (fy, _MIRROR_Y)):
            if flipped and geo in mirror:
                geo = props["geo"] = mirror[geo]


def _reorder(shapes: Shapes, ids: list[str], to: str, target: Any = None) -> None:
    moving = [sid for sid in shapes if sid in set(ids)]
    if not moving:
        return
    moving_set = set(moving)
    order = list(shapes)
    rest = [sid for sid in order if sid not in moving_set]
    if to in ("behind", "in_front"):
        # Relative to one named shape (tldraw's editor places by index the same way).
        if not isinstance(target, str) or target not in rest:
            return
        anchor = rest.index(target) + (1 if to == "in_front" else 0)
        new_order = rest[:anchor] + moving + rest[anchor:]
    elif to == "front":
        new_order = rest + moving
    elif to == "back":
        new_order = moving + rest
    else:
        # forward/backward: the block jumps one non-moved shape past its extreme member.
        if to == "forward":
            last = max(order.index(m) for m in moving)
            after = [sid for sid in order[last + 1 :] if sid not in moving_set]
            anchor = rest.index(after[0]) + 1 if after else len(rest)
        else:
            first = min(order.index(m) for m in moving)
            before = [sid for sid in order[:first] if sid not in moving_set]
            anchor = rest.index(before[-1]) if before else 0
        new_order = rest[:anchor] + moving + rest[anchor:]
    records = {sid: shapes[sid] for sid in new_order}
    shapes.clear()
    shapes.update(records)


def _create(shapes: Shapes, p: dict[str, Any]) -> None:
    sid = p.get("id")
    if not isinstance(sid, str) or not sid:
        return
    record: Shape = {
        "id": sid,
        "type": str(p.get("type") or "unknown"),
        "x": num(p.get("x")),
        "y": num(p.get("y")),
        "rotation": num(p.get("rotation")),
        "props": copy.deepcopy(p.get("props")) if isinstance(p.get("props"), dict) else {},
    }
    if isinstance(p.get("parentId"), str):
        record["parentId"] = p["parentId"]
    if isinstance(p.get("meta"), dict):
        record["meta"] = copy.deepcopy(p["meta"])
    if isinstance(p.get("bindings"), dict):
        record["bindings"] = {
            k: v if isinstance(v, str) else None for k, v in p["bindings"].items()
        }
    _split_draw_edges(record)
    shapes[sid] = record


def _split_draw_edges(s: Shape) -> None:
    if s.get("type") == "draw" and "segments" in s["props"]:
        s["props"]["segments"] = split_straight(s["props"]["segments"])


def _update(shapes: Shapes, p: dict[str, Any]) -> None:
    sid = p.get("id")
    if not isinstance(sid, str) or sid not in shapes:
        return
    s = shapes[sid]
    for key in ("x", "y", "rotation"):
        if key in p:
            s[key] = num(p[key])
    if isinstance(p.get("type"), str):
        s["type"] = p["type"]
    if "parentId" in p:
        if isinstance(p["parentId"], str):
            s["parentId"] = p["parentId"]
        else:
            s.pop("parentId", None)
    if isinstance(p.get("props"), dict):
        props = s.setdefault("props", {})
        for k, v in p["props"].items():
            if v is None:
                props.pop(k, None)
            else:
                props[k] = copy.deepcopy(v)
        _split_draw_edges(s)
    if isinstance(p.get("meta"), dict):
        meta = s.setdefault("meta", {})
        for k, v in p["meta"].items():
            if v is None:
                meta.pop(k, None)
            else:
                meta[k] = copy.deepcopy(v)
    if isinstance(p.get("bindings"), dict):
        binds = s.setdefault("bindings", {})
        for k, v in p["bindings"].items():
            binds[k] = v if isinstance(v, str) else None


def _delete(shapes: Shapes, ids: list[str]) -> None:
    gone = set(descendants(shapes, ids))
    for sid in gone:
        del shapes[sid]
    for s in shapes.values():
        binds = s.get("bindings")
        if isinstance(binds, dict):
            for k, v in binds.items():
                if v in gone:
                    binds[k] = None


def _move(shapes: Shapes, p: dict[str, Any]) -> None:
    dx, dy = num(p.get("dx")), num(p.get("dy"))
    for sid in descendants(shapes, _ids(p)):
        _translate(shapes[sid], dx, dy)


def _resize(shapes: Shapes, p: dict[str, Any]) -> None:
    sx, sy = num(p.get("scaleX"), 1.0), num(p.get("scaleY"), 1.0)
    ox, oy = num(p.get("originX")), num(p.get("originY"))
    for sid in descendants(shapes, _ids(p)):
        _resize_shape(shapes[sid], sx, sy, ox, oy)


def _rotate(shapes: Shapes, p: dict[str, Any]) -> None:
    angle = num(p.get("angle"))
    ox, oy = num(p.get("originX")), num(p.get("originY"))
    for sid in descendants(shapes, _ids(p)):
        s = shapes[sid]
        s["x"], s["y"] = rotate_point(num(s.get("x")), num(s.get("y")), ox, oy, angle)
        s["rotation"] = (num(s.get("rotation")) + angle) % (2 * math.pi)


def _layout(shapes: Shapes, name: str, p: dict[str, Any]) -> None:
    ids = [i for i in _ids(p) if i in shapes]
    if name == "align":
        deltas = layout.align(ids, str(p.get("alignment")), shapes)
    elif name == "distribute":
        deltas = layout.distribute(ids, str(p.get("direction")), shapes)
    else:
        deltas = layout.stack(ids, str(p.get("direction")), num(p.get("gap")), shapes)
    _apply_deltas(shapes, deltas)


_HANDLERS: dict[str, Callable[[Shapes, dict[str, Any]], None]] = {
    "create_shape": _create,
    "update_shape": _update,
    "delete_shape": lambda s, p: _delete(s, _ids(p)),
    "reorder": lambda s, p: _reorder(s, _ids(p), str(p.get("to") or "front"), p.get("target")),
}

LayoutVerb = Literal["move", "resize", "rotate", "align", "distribute", "stack"]
LAYOUT_VERBS: tuple[str, ...] = LayoutVerb.__args__  # type: ignore[attr-defined]
_LAYOUT: dict[str, Callable[[Shapes, dict[str, Any]], None]] = {
    "move": _move,
    "resize": _resize,
    "rotate": _rotate,
    "align": lambda s, p: _layout(s, "align", p),
    "distribute": lambda s, p: _layout(s, "distribute", p),
    "stack": lambda s, p: _layout(s, "stack", p),
}


def apply_layout(shapes: Shapes, verb: LayoutVerb, params: dict[str, Any]) -> None:
    """Apply one layout verb to `shapes` in place (a preview of the mirror, never sent)."""
    _LAYOUT[verb](shapes, params)


def apply_wire_action(shapes: Shapes, action: WireAction) -> None:
    """Apply one wire action to `shapes` in place. Never raises on odd params: skips them."""
    handler = _HANDLERS.get(action.name)
    if handler is not None:
        handler(shapes, action.params)


def apply_wire_actions(shapes: Shapes, actions: Iterable[WireAction]) -> None:
    for action in actions:
        apply_wire_action(shapes, action)
