"""The two cheaper shape tiers: BlurryShape (in view) and PeripheralShapeCluster (out of view).

Clusters join shapes whose bounds, padded by 75 px, overlap. Candidate pairs come from a
uniform grid and are merged with union-find, so the work grows with the number of shapes,
not with its square.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from steward.canvas.bounds import shape_bounds
from steward.canvas.simple import model_type, to_simple
from steward.canvas.styles import fill_to_model
from steward.protocol.box import Box, union

CLUSTER_PADDING = 75.0
_CELL = 600.0
# A shape covering more grid cells than this is checked against the others directly.
_MAX_CELLS = 64


def to_blurry(record: Mapping[str, Any], shapes: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """{shapeId, type, x, y, w, h, x1…y2 (arrows and lines), text?, textAlign? (centred or
    right-aligned text), color?, fill?}: enough to
    refer to a shape by id, to tell an arrow's start from its end, and to answer "make the
    blue boxes red" without guessing colours from the image (in the model's fill names)."""
    b = shape_bounds(record, shapes)
    out: dict[str, Any] = {
        "shapeId": record["id"],
        "type": model_type(dict(record)),
        "x": b.x,
        "y": b.y,
        "w": b.w,
        "h": b.h,
    }
    if out["type"] in ("arrow", "line"):  # which end is which: as `create` takes them
        ends = to_simple(dict(record), dict(shapes) if shapes is not None else None)
        out.update({k: ends[k] for k in ("x1", "y1", "x2", "y2") if k in ends})
    props = record.get("props") or {}
    text = props.get("text")
    if isinstance(text, str) and text:
        out["text"] = text
    align = props.get("textAlign")
    if out["type"] == "text" and align in ("middle", "end"):
        # The box is the text as drawn; `move` takes the anchor of its alignment (the box's
        # centre or right edge), which a reader could not tell without it.
        out["textAlign"] = align
    color, fill = props.get("color"), props.get("fill")
    if isinstance(color, str):
        out["color"] = color
    if isinstance(fill, str) and fill != "none":
        out["fill"] = fill_to_model(fill)
    return out


@dataclass(frozen=True)
class PeripheralCluster:
    """Out-of-view shapes that lie close together, shown to the model as one area and a count."""

    bounds: Box
    count: int

    def to_prompt(self) -> dict[str, Any]:
        return {"bounds": self.bounds.to_dict(), "numberOfShapes": self.count}


class _UnionFind:
    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, i: int) -> int:
        root = i
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[i] != root:  # path compression
            self.parent[i], i = root, self.parent[i]
        return root

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def cluster_rects(rects: list[Box], padding: float = CLUSTER_PADDING) -> list[PeripheralCluster]:
    padded = [r.expand(padding) for r in rects]
    uf = _UnionFind(len(rects))
    grid: dict[tuple[int, int], list[int]] = {}
    big: list[int] = []
    for i, r in enumerate(padded):
        cx0, cx1 = int(r.x // _CELL), int(r.max_x // _CELL)
        cy0, cy1 = int(r.y // _CELL), int(r.max_y // _CELL)
        if (cx1 - cx0 + 1) * (cy1 - cy0 + 1) > _MAX_CELLS:
            big.append(i)
            continue
        for cx in range(cx0, cx1 + 1):
            for cy in range(cy0, cy1 + 1):
                cell = grid.setdefault((cx, cy), [])
                for j in cell:
                    if padded[j].intersects(r) or padded[j].contains(r) or r.contains(padded[j]):
                        uf.union(i, j)
                cell.append(i)
    for i in big:
        for j in range(len(padded)):
            if i != j and padded[i].intersects(padded[j]):
                uf.union(i, j)
    groups: dict[int, list[int]] = {}
    for i in range(len(rects)):
        groups.setdefault(uf.find(i), []).append(i)
    out = []
    for members in groups.values():
        box = union(rects[i] for i in members)
        assert box is not None
        out.append(PeripheralCluster(box, len(members)))
    return out


def capped_clusters(rects: list[Box], cap: int = 32) -> list[PeripheralCluster]:
    """Clusters, coarsened (padding doubled) until there are at most `cap` of them."""
    padding = CLUSTER_PADDING
    clusters = cluster_rects(rects, padding)
    while len(clusters) > cap and padding < 1e6:
        padding *= 2
        clusters = cluster_rects(rects, padding)
    return clusters


def peripheral_clusters(
    records: Iterable[Mapping[str, Any]], shapes: Mapping[str, Any] | None = None
) -> list[PeripheralCluster]:
    return cluster_rects([shape_bounds(r, shapes) for r in records])
