"""`update` changes only the fields its shape's kind has, never the position; the schema the
model reads names those fields and no others."""

from __future__ import annotations

from typing import Any

from steward.actions.base import RunState
from steward.actions.fields import FIELDS
from steward.actions.registry import ACTIONS, process
from steward.prompt.response_schema import response_schema

BOX = {
    "id": "box",
    "type": "geo",
    "x": 0.0,
    "y": 0.0,
    "rotation": 0.0,
    "props": {"geo": "rectangle", "w": 100.0, "h": 50.0, "color": "red", "fill": "solid"},
}


def _update(**fields: Any) -> tuple[Any, RunState]:
    ctx = RunState(shapes={"box": dict(BOX)})
    action = {"_type": "update", "intent": "t", "update": {"shapeId": "box", **fields}}
    out = process(action, index=0, complete=True, incomplete_path=None, ctx=ctx, enabled=ACTIONS)
    return out, ctx


def test_an_update_refuses_the_keys_its_kind_lacks_with_a_note() -> None:
    out, ctx = _update(color="blue", x1=10, opacity=0.5)
    assert out is not None
    (op,) = out.ops
    assert op.params == {"id": "box", "props": {"color": "blue"}}
    assert "update of 'box' (that field was left as it was): a rectangle has no field 'x1'" in (
        ctx.notes
    )
    assert any("has no field 'opacity'" in n for n in ctx.notes)


def test_an_update_never_moves_a_shape() -> None:
    out, ctx = _update(x=500, y=40, w=300)
    assert out is not None
    (op,) = out.ops
    assert "x" not in op.params and "y" not in op.params
    assert op.params["props"] == {"w": 300.0}
    assert ctx.notes == ["update of 'box': position (x, y) left as it was; use move"]


def test_the_update_schema_names_the_changeable_fields_and_no_others() -> None:
    schema = response_schema(["update"])
    change = schema["$defs"]["ShapeChange"]
    assert change["additionalProperties"] is False and change["required"] == ["shapeId"]
    names = set(change["properties"])
    # Every field some kind has, except the position, which `move` changes.
    every = set().union(*FIELDS.values()) - {"x", "y", "subType"}
    assert names == every
