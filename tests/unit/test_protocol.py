"""Protocol models: decoding errors, limits, and generated TypeScript drift."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from steward.commands.protocol import TS_PATH
from steward.protocol import (
    Ack,
    ActionEnvelope,
    CanvasEdit,
    PromptRequest,
    ProtocolError,
    Resync,
    ViewportUpdate,
    decode,
)
from steward.protocol.box import Box
from steward.protocol.limits import MAX_PROMPT_CHARS
from steward.protocol.messages import ALL_MESSAGES
from steward.protocol.schema import json_schema, typescript


def test_generated_typescript_is_current() -> None:
    assert TS_PATH.exists(), "run `uv run steward protocol typescript`"
    assert TS_PATH.read_text() == typescript(), "stale: run `uv run steward protocol typescript`"


def test_schema_has_every_message_and_constants() -> None:
    schema = json_schema()
    for name in ALL_MESSAGES:
        assert name in schema["$defs"]
    assert schema["constants"]["TOPIC_ACTION"] == "agent:action"
    assert schema["constants"]["MAX_ENVELOPE_BYTES"] == 15 * 1024
    json.dumps(schema)  # serialisable


def test_camel_case_on_the_wire() -> None:
    raw = Resync(session_id="s", last_seq=3).to_wire()
    assert json.loads(raw) == {"sessionId": "s", "lastSeq": 3}
    assert decode(Resync, raw, topic="t", max_bytes=100) == Resync(session_id="s", last_seq=3)


@pytest.mark.parametrize(
    ("model", "data", "kind", "needle"),
    [
        (Ack, b"{not json", "invalid_json", "Invalid JSON"),
        (Ack, b'{"sessionId":"s","seq":0,"applied":[],"appliedAt":1}', "schema", "seq"),
        (Ack, b'{"sessionId":"s","seq":1,"applied":[],"appliedAt":1,"x":1}', "schema", "x"),
        (
            PromptRequest,
            json.dumps({"message": "a" * (MAX_PROMPT_CHARS + 1)}).encode(),
            "schema",
            "message",
        ),
        (
            ActionEnvelope,
            b'{"v":"other/2","sessionId":"s","seq":1,"actions":[],"ts":0}',
            "schema",
            "v",
        ),
        (
            ActionEnvelope,
            b'{"sessionId":"s","seq":1,"actions":[{"id":"a","name":"explode"}],"ts":0}',
            "schema",
            "name",
        ),
        (CanvasEdit, b"\xff\xfe\x00", "invalid_json", ""),
        (Ack, b"[]", "schema", ""),
    ],
)
def test_invalid_messages_give_one_clear_error(
    model: type, data: bytes, kind: str, needle: str
) -> None:
    result = decode(model, data, topic="agent:test", max_bytes=100_000)
    assert isinstance(result, ProtocolError)
    assert result.kind == kind
    assert needle in result.reason
    assert "agent:test" in str(result)


def test_oversize_is_refused_before_parsing() -> None:
    result = decode(Ack, b"x" * 2000, topic="agent:ack", max_bytes=1000)
    assert isinstance(result, ProtocolError) and result.kind == "oversize"


@given(st.binary(max_size=2000))
def test_decode_never_raises_on_garbage(data: bytes) -> None:
    for model in ALL_MESSAGES.values():
        out = decode(model, data, topic="fuzz", max_bytes=1500)
        assert isinstance(out, (model, ProtocolError))


@pytest.mark.parametrize(
    ("viewport", "needle"),
    [
        ('{"x":0,"y":0,"w":10,"h":10,"z":1}', "z"),  # no field beyond x, y, w, h
        ('{"x":0,"y":0,"w":-10,"h":10}', "w"),  # no negative size
        ('{"x":NaN,"y":0,"w":10,"h":10}', "x"),  # finite numbers only
        ('{"x":1e12,"y":0,"w":10,"h":10}', "viewport"),  # within geometry's bounds
        ('{"x":0,"y":0,"w":10}', "h"),  # every field
    ],
)
def test_a_box_on_the_wire_is_checked_like_a_message(viewport: str, needle: str) -> None:
    data = f'{{"viewport":{viewport},"ts":0}}'.encode()
    result = decode(ViewportUpdate, data, topic="canvas:viewport", max_bytes=10_000)
    assert isinstance(result, ProtocolError) and result.kind == "schema"
    assert needle in result.reason


def test_a_box_read_off_the_wire_is_the_one_box() -> None:
    data = b'{"viewport":{"x":1,"y":2,"w":30,"h":40},"selection":[],"ts":0}'
    update = decode(ViewportUpdate, data, topic="canvas:viewport", max_bytes=10_000)
    assert isinstance(update, ViewportUpdate)
    assert type(update.viewport) is Box and update.viewport == Box(1, 2, 30, 40)
    assert update.viewport.contains(Box(1, 2, 30, 40).expand(-1))
    assert json.loads(update.to_wire())["viewport"] == {"x": 1, "y": 2, "w": 30, "h": 40}
