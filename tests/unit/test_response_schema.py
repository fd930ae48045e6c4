"""The advertised response schema: every action carries its own fields, whoever shares a class."""

from __future__ import annotations

import pytest

from steward.actions.registry import ACTIONS
from steward.prompt.response_schema import response_schema


def _variants(names: list[str]) -> dict[str, dict[str, object]]:
    schema = response_schema(names)
    items = schema["properties"]["actions"]["items"]["anyOf"]
    return {v["properties"]["_type"]["const"]: v for v in items}


@pytest.mark.parametrize("name", sorted(ACTIONS))
def test_every_action_advertises_its_required_fields(name: str) -> None:
    spec = ACTIONS[name]
    own = spec.schema.model_json_schema()
    # Alone and among every other action (shared schema classes are where this broke).
    for variant in (_variants([name])[name], _variants([*ACTIONS, name])[name]):
        props = variant["properties"]
        assert isinstance(props, dict)
        assert set(own.get("properties", {})) <= set(props), name
        assert variant["required"] == ["_type", *own.get("required", [])], name
        assert set(variant["required"]) <= set(props), name


def test_send_to_back_takes_shape_ids() -> None:
    variant = _variants(["bringToFront", "sendToBack"])["sendToBack"]
    assert "shapeIds" in variant["required"]  # type: ignore[operator]
