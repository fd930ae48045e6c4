"""Screenshot image types: the stream's mimeType decides the type, the magic bytes must match
it, and the type travels from the inbox through the context and prompt to the model request."""

from __future__ import annotations

from typing import Any

import pytest

from steward.canvas.coords import CoordinateSpace
from steward.model.anthropic_model import AnthropicModel
from steward.model.base import ModelRequest
from steward.prompt.parts.screenshot import PART
from steward.prompt.state import PromptState
from steward.protocol.box import Box
from steward.protocol.images import matches, screenshot_type, sniff
from steward.protocol.names import TOPIC_CONTEXT, TOPIC_SCREENSHOT
from steward.room.inbound.stream_inbox import ContextFailure, Received
from tests.support.context_rigs import InboxRig

JPEG = b"\xff\xd8\xff\xe0" + b"\x00" * 16
WEBP = b"RIFF\x24\x00\x00\x00WEBPVP8 " + b"\x00" * 16
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16


def test_accepted_types_their_signatures_and_mime_parameters() -> None:
    assert screenshot_type("image/webp") == "image/webp"
    assert screenshot_type("Image/JPEG; q=0.6") == "image/jpeg"
    for refused in ("image/png", "application/octet-stream", "", "image/webpx"):
        assert screenshot_type(refused) is None
    assert matches("image/jpeg", JPEG) and matches("image/webp", WEBP)
    assert not matches("image/webp", JPEG) and not matches("image/jpeg", WEBP)
    assert not matches("image/webp", b"RIFF\x00\x00\x00\x00WAVE") and not matches("image/png", PNG)
    assert not matches("image/webp", b"RIFF")  # too short to hold the form type
    assert (sniff(JPEG), sniff(WEBP), sniff(PNG)) == ("image/jpeg", "image/webp", None)


@pytest.mark.parametrize(("mime_type", "data"), [("image/webp", WEBP), ("image/jpeg", JPEG)])
async def test_a_screenshot_of_an_accepted_type_is_received_with_that_type(
    mime_type: str, data: bytes
) -> None:
    rig = InboxRig()
    fut, reader = await rig.deliver(mime_type, data)
    assert fut.result() == Received(data, mime_type)
    assert rig.rejected == [] and reader.read


async def test_another_image_type_is_refused_unread() -> None:
    rig = InboxRig()
    fut, reader = await rig.deliver("image/png", PNG)
    assert rig.rejected == [(TOPIC_SCREENSHOT, "alice", "unsupported_image_type")]
    with pytest.raises(ContextFailure, match="unsupported_image_type"):
        fut.result()
    assert reader.closed and not reader.read  # never drained


@pytest.mark.parametrize(
    ("mime_type", "data"), [("image/webp", JPEG), ("image/jpeg", WEBP), ("image/webp", b"")]
)
async def test_bytes_that_do_not_match_their_type_are_refused(mime_type: str, data: bytes) -> None:
    rig = InboxRig()
    fut, _ = await rig.deliver(mime_type, data)
    assert rig.rejected == [(TOPIC_SCREENSHOT, "alice", "image_type_mismatch")]
    with pytest.raises(ContextFailure, match="image_type_mismatch"):
        fut.result()


async def test_the_shapes_stream_is_not_held_to_image_types() -> None:
    rig = InboxRig()
    fut, _ = await rig.deliver("application/json", b"[]", topic=TOPIC_CONTEXT)
    assert fut.result().data == b"[]" and rig.rejected == []


def _state(shot: bytes | None, media_type: str) -> PromptState:
    return PromptState(
        message="m",
        shapes=None,
        viewport=Box(0, 0, 800, 600),
        coords=CoordinateSpace(0, 0),
        enabled_actions=(),
        screenshot=shot,  # type: ignore[arg-type]
        screenshot_type=media_type,
    )


def test_the_prompt_part_and_the_anthropic_request_carry_the_media_type() -> None:
    blocks = PART.build(_state(WEBP, "image/webp"))
    image: dict[str, Any] = blocks[-1]
    assert image == {"type": "image", "media_type": "image/webp", "data": WEBP}
    # The caption says how the image maps to the canvas: the viewport's bounds, scaled to fit.
    assert "x 0 to 800, y 0 to 600" in blocks[0]["text"]
    assert "top-left corner is (0, 0)" in blocks[0]["text"]
    assert PART.build(_state(None, "image/webp")) == []
    params = AnthropicModel("m", api_key="k").build_params(ModelRequest(system=["s"], user=blocks))
    source = params["messages"][0]["content"][1]["source"]
    assert source["type"] == "base64" and source["media_type"] == "image/webp"
