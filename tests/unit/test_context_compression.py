"""The context's two byte streams kept small: gzip-compressed shapes JSON (inflated with a cap
on the inflated size, corrupt gzip refused, plain JSON still accepted) and the screenshot's
byte budget (`maxBytes` on the wire, the setting, headless clients honouring it)."""

from __future__ import annotations

import gzip
import io
import itertools
import json
import zlib

import pytest
from PIL import Image
from pydantic import ValidationError

from steward.config import Settings
from steward.protocol.limits import (
    DEFAULT_SCREENSHOT_MAX_BYTES,
    MAX_SCREENSHOT_BYTES,
    MAX_SHAPES_JSON_BYTES,
)
from steward.protocol.messages import ContextRequest
from steward.protocol.names import TOPIC_CONTEXT
from steward.room.inbound.stream_inbox import ContextFailure, CorruptGzip, Inflater, Oversize
from steward_tools.headless.synthetic_jpeg import (
    MIN_LONG_SIDE,
    budget_steps,
    fit_jpeg,
    render_canvas,
)
from tests.support.context_rigs import FetchRig, InboxRig

SHAPES = [{"id": f"s{i}", "type": "geo", "x": i, "y": i, "props": {"w": 100}} for i in range(300)]
SHAPES_JSON = json.dumps(SHAPES).encode()


async def test_gzip_shapes_are_inflated_and_received_as_json() -> None:
    rig = InboxRig()
    fut, reader = await rig.deliver("application/gzip", gzip.compress(SHAPES_JSON), TOPIC_CONTEXT)
    got = fut.result()
    assert got.data == SHAPES_JSON and got.mime_type == "application/json"
    assert json.loads(got.data) == SHAPES
    assert rig.rejected == [] and reader.read


@pytest.mark.parametrize("mime_type", ["application/json", "", "application/octet-stream"])
async def test_plain_json_shapes_are_still_accepted(mime_type: str) -> None:
    rig = InboxRig()
    fut, _ = await rig.deliver(mime_type, SHAPES_JSON, TOPIC_CONTEXT)
    assert fut.result().data == SHAPES_JSON
    assert rig.rejected == []


async def test_a_zip_bomb_is_refused_as_oversize_after_at_most_the_cap() -> None:
    bomb = gzip.compress(b"\x00" * (MAX_SHAPES_JSON_BYTES * 3), 9)
    assert len(bomb) < 64_000  # small on the wire, 24 MiB inflated
    rig = InboxRig()
    fut, reader = await rig.deliver("application/gzip", bomb, TOPIC_CONTEXT)
    with pytest.raises(ContextFailure, match="oversize"):
        fut.result()
    assert rig.rejected == [(TOPIC_CONTEXT, "alice", "oversize")]
    assert reader.closed  # the rest is never read


def test_the_inflater_never_holds_more_than_its_cap_plus_one() -> None:
    inflater = Inflater(1_000)
    packed = zlib.compress(b"a" * 50_000, wbits=31)  # one gzip member
    with pytest.raises(Oversize):
        for i in range(0, len(packed), 7):
            inflater.feed(packed[i : i + 7])
    assert len(inflater.out) == 1_001


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b"not gzip at all", "not gzip"),
        (gzip.compress(SHAPES_JSON)[:-12], "truncated"),
        (gzip.compress(SHAPES_JSON) + b"trailing", "data after the end"),
        (SHAPES_JSON, "plain JSON labelled gzip"),
    ],
)
async def test_corrupt_gzip_is_a_logged_rejection_that_fails_the_attempt(
    data: bytes, why: str
) -> None:
    rig = InboxRig()
    fut, _ = await rig.deliver("application/gzip; charset=binary", data, TOPIC_CONTEXT)
    with pytest.raises(ContextFailure, match="corrupt_gzip"):
        fut.result()
    assert rig.rejected == [(TOPIC_CONTEXT, "alice", "corrupt_gzip")], why


def test_a_truncated_member_is_corrupt_only_once_the_stream_ends() -> None:
    inflater = Inflater(MAX_SHAPES_JSON_BYTES)
    inflater.feed(gzip.compress(SHAPES_JSON)[:40])
    with pytest.raises(CorruptGzip, match="truncated"):
        inflater.finish()


def test_context_request_carries_max_bytes_as_camel_case_within_bounds() -> None:
    req = ContextRequest(request_id="r1", max_size=800, max_bytes=64_000)
    assert json.loads(req.to_wire()) == {
        "requestId": "r1",
        "maxSize": 800,
        "maxBytes": 64_000,
        "want": ["screenshot", "shapes"],
    }
    assert "maxBytes" not in json.loads(ContextRequest(request_id="r1").to_wire())
    for bad in (999, MAX_SCREENSHOT_BYTES + 1, 0):
        with pytest.raises(ValidationError):
            ContextRequest.model_validate({"requestId": "r1", "maxBytes": bad})


def test_the_setting_defaults_to_64000_and_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings().steward_screenshot_max_bytes == DEFAULT_SCREENSHOT_MAX_BYTES == 64_000
    monkeypatch.setenv("STEWARD_SCREENSHOT_MAX_BYTES", "32000")
    assert Settings().steward_screenshot_max_bytes == 32_000
    monkeypatch.setenv("STEWARD_SCREENSHOT_MAX_BYTES", "10")
    with pytest.raises(ValidationError):
        Settings()


async def test_the_fetcher_sends_its_byte_budget() -> None:
    rig = FetchRig()
    rig.fetcher.max_bytes = 48_000
    ctx = await rig.fetcher.fetch()
    assert not ctx.degraded
    assert rig.host.calls[0]["maxBytes"] == 48_000


def test_budget_steps_lower_quality_then_scale_down_to_the_minimum_long_side() -> None:
    steps = budget_steps(800)
    assert steps[:4] == [(0.6, 1.0), (0.45, 1.0), (0.3, 1.0), (0.3, 0.8)]
    assert steps[-1][1] * 800 == pytest.approx(MIN_LONG_SIDE)
    assert all(b[1] <= a[1] for a, b in itertools.pairwise(steps))
    assert budget_steps(300) == [(0.6, 1.0), (0.45, 1.0), (0.3, 1.0)]


def test_headless_screenshots_fit_the_budget_or_are_the_smallest_step() -> None:
    shapes = {s["id"]: dict(s) for s in SHAPES}
    image = render_canvas(shapes, width=800, height=500, scale=0.625)
    unbounded = fit_jpeg(image, MAX_SCREENSHOT_BYTES)
    assert (unbounded.quality, unbounded.scale, unbounded.tries) == (0.6, 1.0, 1)
    budget = len(unbounded.data) // 2
    fitted = fit_jpeg(image, budget)
    assert len(fitted.data) <= budget and fitted.data[:2] == b"\xff\xd8"
    assert fitted.tries > 1 and (fitted.quality < 0.6 or fitted.scale < 1.0)
    assert Image.open(io.BytesIO(fitted.data)).size == (fitted.width, fitted.height)
    tiny = fit_jpeg(image, 1_000)
    assert (tiny.quality, tiny.width, tiny.height) == (0.3, 320, 200)
    assert tiny.tries == len(budget_steps(800))
