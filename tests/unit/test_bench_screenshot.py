"""The pure parts of the Chromium screenshot bench: JPEG size parsing and the stage split."""

from __future__ import annotations

import io

from PIL import Image

from steward.bench.screenshot import _Probe, _stages, jpeg_size


def _jpeg(w: int, h: int) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (w, h), "white").save(buf, "JPEG", quality=80)
    return buf.getvalue()


def test_jpeg_size_reads_the_frame_header() -> None:
    assert jpeg_size(_jpeg(1280, 800)) == (1280, 800)
    assert jpeg_size(_jpeg(17, 3)) == (17, 3)


def test_jpeg_size_rejects_what_is_not_a_jpeg() -> None:
    assert jpeg_size(b"\x89PNG\r\n\x1a\n" + b"\x00" * 32) is None
    assert jpeg_size(b"\xff\xd8") is None
    assert jpeg_size(b"") is None


def test_stages_map_page_instants_onto_the_steward_clock() -> None:
    # The page reports epoch ms; offset = wall - monotonic, so monotonic = wall/1000 - offset.
    offset = 1_000.0
    probe = _Probe(start=10.0, request_ids=["r1"], rpc_reply=10.5, end=10.6)
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
    stages = _stages([probe], [page], offset)
    assert abs(stages["rpc_to_page"]["p50"] - 10.0) < 0.05
    assert abs(stages["to_image"]["p50"] - 200.0) < 0.05
    assert abs(stages["jpeg_stream_to_steward"]["p50"] - 170.0) < 0.05
    assert abs(stages["steward_tail"]["p50"] - 100.0) < 0.05


def test_stages_skip_requests_the_page_never_saw() -> None:
    probe = _Probe(start=1.0, request_ids=["lost"], end=3.0)
    assert _stages([probe], [{"requestId": "other", "enter": 1.0}], 0.0) == {}
