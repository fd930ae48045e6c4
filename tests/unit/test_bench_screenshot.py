"""The pure parts of the Chromium screenshot bench: image size parsing and the stage split."""

from __future__ import annotations

import io
from typing import Any

import pytest
from PIL import Image

from steward_tools.bench.screenshot import Probe, image_size, stage_times


def _encoded(w: int, h: int, fmt: str, mode: str = "RGB", **kw: Any) -> bytes:
    buf = io.BytesIO()
    Image.new(mode, (w, h), (255, 0, 0, 128) if mode == "RGBA" else "white").save(buf, fmt, **kw)
    return buf.getvalue()


@pytest.mark.parametrize(
    ("fmt", "mode", "kw", "chunk"),
    [
        ("JPEG", "RGB", {"quality": 80}, None),
        ("WEBP", "RGB", {"quality": 60}, b"VP8 "),  # lossy: what browsers send
        ("WEBP", "RGB", {"lossless": True}, b"VP8L"),
        ("WEBP", "RGBA", {"quality": 60, "exact": True}, b"VP8X"),  # alpha: extended header
    ],
)
def test_image_size_reads_jpeg_and_every_webp_header(
    fmt: str, mode: str, kw: dict[str, Any], chunk: bytes | None
) -> None:
    for w, h in ((800, 500), (17, 3)):
        data = _encoded(w, h, fmt, mode, **kw)
        if chunk is not None:
            assert data[12:16] == chunk
        assert image_size(data) == (w, h)


def test_image_size_rejects_what_is_neither() -> None:
    assert image_size(b"\x89PNG\r\n\x1a\n" + b"\x00" * 32) is None
    assert image_size(b"\xff\xd8") is None
    assert image_size(b"RIFF\x00\x00\x00\x00WEBPVP8 ") is None  # header cut short
    assert image_size(b"RIFF\x20\x00\x00\x00WEBPJUNK" + b"\x00" * 20) is None
    assert image_size(b"") is None


def test_stages_map_page_instants_onto_the_steward_clock() -> None:
    # The page reports epoch ms; offset = wall - monotonic, so monotonic = wall/1000 - offset.
    offset = 1_000.0
    probe = Probe(start=10.0, request_ids=["r1"], rpc_reply=10.5, end=10.6)
    probe.streams = {"screenshot": 10.4, "shapes": 10.45}
    wall = lambda mono: (mono + offset) * 1000  # noqa: E731
    page = {
        "requestId": "r1",
        "enter": wall(10.01),
        "toImageStart": wall(10.02),
        "toImageEnd": wall(10.22),
        "exit": wall(10.3),
        "streams": {
            "agent:screenshot": {"start": wall(10.23), "end": wall(10.25)},
            "agent:context": {"start": wall(10.23), "end": wall(10.26)},
        },
    }
    stages = stage_times([probe], [page], offset)
    assert abs(stages["rpc_to_page"]["p50"] - 10.0) < 0.05
    assert abs(stages["to_image"]["p50"] - 200.0) < 0.05
    assert abs(stages["image_stream_to_steward"]["p50"] - 170.0) < 0.05
    assert abs(stages["steward_tail"]["p50"] - 100.0) < 0.05


def test_stages_skip_requests_the_page_never_saw() -> None:
    probe = Probe(start=1.0, request_ids=["lost"], end=3.0)
    assert stage_times([probe], [{"requestId": "other", "enter": 1.0}], 0.0) == {}
