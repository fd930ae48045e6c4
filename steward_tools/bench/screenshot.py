"""screenshot_ms: the host screenshot round trip for a 1,000-shape canvas at 1280x800, Chromium.

One Chromium tab on the client-bridge demo page joins a room of its own and becomes its host;
the tab is seeded with 1,000 shapes inside the 1280x800 page box (geo shapes, a quarter of
them labelled, text, arrows). The bench then calls the steward's real context path
(`SnapshotFetcher.fetch`, the same call an agent makes) for that box with the production
`STEWARD_SCREENSHOT_MAX_SIZE` (800: an 800x500 thumbnail of the 1280x800 box) and the
steward's cache off, sequentially, and times each call:
- `screenshot_ms` (warm): fetch called → the whole image (WebP, or JPEG where the browser
  cannot encode WebP) received by the steward (byte stream `agent:screenshot`) on an unchanged
  document, i.e. RPC `steward.context` → the host tab's idle pre-rendered image (client-bridge
  `ScreenshotCache`) → stream;
- `screenshot_cold_ms`: the same after nudging one shape before each fetch, so the host
  renders (`editor.toImage`) on the critical path;
- `screenshot_sources` / `screenshot_cold_sources`: per fetch, where the host's image came
  from (`cache`, `joined` a pre-render under way, or `render`), reported by the page;
- `context_fetch_ms`: the whole fetch (also the shapes JSON stream and the RPC reply).
`screenshot_stages_ms` splits it using the page's own timestamps (see `browsers.py`).
"""

from __future__ import annotations

import os
import statistics
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from steward.obs.stage_hooks import Stage, StageEvent
from steward.protocol.box import Box
from steward.protocol.images import sniff
from steward.protocol.names import TOPIC_CONTEXT, TOPIC_SCREENSHOT
from steward.room.runtime import RoomRuntime
from steward_tools.bench.harness import Stack, percentiles
from steward_tools.rigs.browsers import Browsers, wait_host

WIDTH, HEIGHT = 1280, 800


def unmeasured(reason: str) -> dict[str, Any]:
    return {"screenshot_ms": None, "screenshot_reason": reason}


def image_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) of a JPEG or WebP screenshot from its headers, or None."""
    kind = sniff(data)
    if kind == "image/jpeg":
        return _jpeg_size(data)
    if kind == "image/webp":
        return _webp_size(data)
    return None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    """From the first chunk: VP8 (lossy) frame header, VP8L (lossless) or VP8X (extended)."""
    chunk, body = data[12:16], data[20:30]
    if len(body) < 10:
        return None
    if chunk == b"VP8 " and body[3:6] == b"\x9d\x01\x2a":  # after the 3-byte frame tag
        w = int.from_bytes(body[6:8], "little") & 0x3FFF
        return w, int.from_bytes(body[8:10], "little") & 0x3FFF
    if chunk == b"VP8L" and body[0] == 0x2F:
        bits = int.from_bytes(body[1:5], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X":  # canvas size minus one, 24-bit little-endian, after flags
        w = int.from_bytes(body[4:7], "little") + 1
        return w, int.from_bytes(body[7:10], "little") + 1
    return None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) from the first SOFn marker of a JPEG, or None if there is none."""
    i = 2
    while i + 9 < len(data):
        if data[i] != 0xFF:
            return None
        marker, length = data[i + 1], int.from_bytes(data[i + 2 : i + 4], "big")
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            h, w = (
                int.from_bytes(data[i + 5 : i + 7], "big"),
                int.from_bytes(data[i + 7 : i + 9], "big"),
            )
            return w, h
        i += 2 + length
    return None


@dataclass
class Probe:
    """Steward-side instants of one fetch (CLOCK_MONOTONIC)."""

    start: float
    request_ids: list[str] = field(default_factory=list)
    rpc_reply: float | None = None
    streams: dict[str, float] = field(default_factory=dict)  # kind → whole stream received
    end: float = 0.0


def _instrument(runtime: RoomRuntime) -> Callable[[], list[Probe]]:
    """Wrap the fetcher's RPC call and the stream inbox to time each stage of a fetch."""
    probes: list[Probe] = []
    inbox, fetcher = runtime.inbox, runtime.snapshots
    expect = inbox.expect

    def timed_expect(
        request_id: str, sender: str, kinds: list[str], caps: dict[str, int] | None = None
    ) -> dict[str, Any]:
        if probes:
            probes[-1].request_ids.append(request_id)
        return expect(request_id, sender, kinds, caps)

    def stream_read(event: StageEvent) -> None:
        if probes and event.detail["request_id"] in probes[-1].request_ids:
            probes[-1].streams.setdefault(str(event.detail["kind"]), event.at)

    def rpc_reply(event: StageEvent) -> None:
        if probes:
            probes[-1].rpc_reply = event.at

    inbox.expect = timed_expect  # type: ignore[method-assign]
    inbox.hooks.listen(Stage.STREAM_READ, stream_read)
    fetcher.hooks.listen(Stage.CONTEXT_RPC_REPLY, rpc_reply)
    return lambda: probes


def _sources(probes: list[Probe], pages: list[dict[str, Any]]) -> dict[str, int]:
    """How many of these fetches the host answered from its cache, a pre-render or a render."""
    by_id = {p["requestId"]: p for p in pages if p.get("requestId")}
    out: dict[str, int] = {}
    for probe in probes:
        page = next((by_id[r] for r in reversed(probe.request_ids) if r in by_id), None)
        source = str(page.get("cache")) if page else "unknown"
        out[source] = out.get(source, 0) + 1
    return out


def _shapes_streams(
    probes: list[Probe], kinds: list[str], pages: list[dict[str, Any]]
) -> dict[str, Any]:
    """Bytes and media types of the warm fetches' shapes streams, as the page sent them."""
    by_id = {p["requestId"]: p for p in pages if p.get("requestId")}
    sizes: list[int] = []
    types: dict[str, int] = {}
    for probe, kind in zip(probes, kinds, strict=True):
        page = next((by_id[r] for r in reversed(probe.request_ids) if r in by_id), None)
        sent = ((page or {}).get("streams") or {}).get(TOPIC_CONTEXT)
        if kind != "warm" or not isinstance(sent, dict):
            continue
        if isinstance(sent.get("bytes"), int):
            sizes.append(sent["bytes"])
        mime = str(sent.get("mimeType"))
        types[mime] = types.get(mime, 0) + 1
    return {"bytes_median": int(statistics.median(sizes)) if sizes else None, "types": types}


def stage_times(probes: list[Probe], pages: list[dict[str, Any]], offset: float) -> dict[str, Any]:
    """Per-stage percentiles: page instants mapped onto CLOCK_MONOTONIC by `offset`."""
    by_id = {p["requestId"]: p for p in pages if p.get("requestId")}
    out: dict[str, list[float]] = {}

    def add(name: str, a: float | None, b: float | None) -> None:
        if a is not None and b is not None:
            out.setdefault(name, []).append((b - a) * 1000)

    def mono(page: dict[str, Any], *path: str) -> float | None:
        value: Any = page
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        return value / 1000 - offset if isinstance(value, int | float) else None

    for probe in probes:
        page = next((by_id[r] for r in reversed(probe.request_ids) if r in by_id), None)
        if page is None:
            continue
        shot = mono(page, "streams", TOPIC_SCREENSHOT, "start")
        add("rpc_to_page", probe.start, mono(page, "enter"))
        add("page_prepare", mono(page, "enter"), mono(page, "toImageStart"))
        add("to_image", mono(page, "toImageStart"), mono(page, "toImageEnd"))
        add("image_bytes", mono(page, "toImageEnd"), shot)
        add("image_send_in_page", shot, mono(page, "streams", TOPIC_SCREENSHOT, "end"))
        add("image_stream_to_steward", shot, probe.streams.get("screenshot"))
        add(
            "shapes_stream_to_steward",
            mono(page, "streams", TOPIC_CONTEXT, "start"),
            probe.streams.get("shapes"),
        )
        add("page_handler_total", mono(page, "enter"), mono(page, "exit"))
        add("rpc_reply_to_steward", mono(page, "exit"), probe.rpc_reply)
        last = max([probe.rpc_reply or 0.0, *probe.streams.values()])
        add("steward_tail", last or None, probe.end)
    return {name: percentiles(values) for name, values in sorted(out.items())}


async def measure(
    stack: Stack,
    browsers: Browsers,
    page_url: str,
    *,
    shapes: int = 1000,
    requests: int = 20,
    warmup: int = 2,
    budget_s: float = 75.0,
    text: bool = True,
    cold_requests: int = 8,
    cold_budget_s: float = 45.0,
) -> dict[str, Any]:
    """Time up to `requests` warm fetches after `warmup` ones, then up to `cold_requests`
    cold ones (an edit before each), stopping at `budget_s` (+ `cold_budget_s` for the cold
    ones) so the run stays bounded when renders are slow; `n` in each figure says how many
    were timed. `*_sources` says where each screenshot came from (host cache or render)."""
    started = time.monotonic()
    room = f"bench-shot-{uuid.uuid4().hex[:6]}"
    runtime = await stack.join(room)
    opened = await browsers.open(page_url, room, 1)
    tab, identity = opened["tabs"][0]["index"], opened["tabs"][0]["identity"]
    await wait_host(runtime, identity)
    bounds = {"x": 0, "y": 0, "w": WIDTH, "h": HEIGHT}
    seeded = await browsers.call("seed", 60, tab=tab, count=shapes, bounds=bounds, text=text)
    clock = await browsers.clock_check(tab)
    renders = (await browsers.call("render", 180, tab=tab, bounds=bounds, count=4))["renders"]
    fetcher = runtime.snapshots
    production_timeout = fetcher.timeout_s
    # Measure the real round trip even when it is slower than the production timeout (2 s by
    # default, after which an agent run would go on text-only); count those separately.
    fetcher.timeout_s, fetcher.attempts = max(30.0, production_timeout), 1
    fetcher.cache.ttl_s = 0.0  # every call goes to the browser
    # What production asks for (the thumbnail), so the figure is the one a prompt waits for.
    fetcher.max_size = stack.settings.steward_screenshot_max_size
    probes = _instrument(runtime)
    box = Box(x=0, y=0, w=WIDTH, h=HEIGHT)
    first: list[float] = []
    totals: list[float] = []
    arrivals: list[float] = []
    sizes: list[int] = []
    dims: set[tuple[int, int] | None] = set()
    types: dict[str, int] = {}
    problems: list[str] = []
    shape_count: int | None = None
    cold_totals: list[float] = []
    cold_arrivals: list[float] = []
    # Warm: fetches on an unchanged document (a user prompting after looking at the canvas);
    # the host answers from its idle pre-render. Cold: one shape nudged before each fetch, so
    # the host renders on the critical path as before the cache.
    plan = [("warmup", n) for n in range(warmup)] + [("warm", n) for n in range(requests)]
    plan += [("cold", n) for n in range(cold_requests)]
    kinds: list[str] = []
    for n, (kind, _) in enumerate(plan):
        if time.monotonic() - started > budget_s + (cold_budget_s if kind == "cold" else 0):
            problems.append(f"{kind}: stopped after {n} requests, the time budget was spent")
            if kind == "cold":
                break
            continue
        if kind == "cold":
            await browsers.call("touch", 30, tab=tab)
        probe = Probe(start=time.monotonic())
        probes().append(probe)
        kinds.append(kind)
        ctx = await fetcher.fetch(bounds=box, want_screenshot=True)
        probe.end = time.monotonic()
        shot = ctx.screenshot
        if ctx.degraded or shot is None or ctx.source_identity != identity:
            problems.append(f"request {n}: degraded={ctx.degraded} image={shot is not None}")
            continue
        dims.add(image_size(shot))
        if kind == "warmup":
            first.append((probe.end - probe.start) * 1000)
            continue
        arrival = probe.streams.get("screenshot")
        if kind == "cold":
            cold_totals.append((probe.end - probe.start) * 1000)
            if arrival is not None:
                cold_arrivals.append((arrival - probe.start) * 1000)
            continue
        totals.append((probe.end - probe.start) * 1000)
        if arrival is not None:
            arrivals.append((arrival - probe.start) * 1000)
        sizes.append(len(shot))
        types[ctx.screenshot_type] = types.get(ctx.screenshot_type, 0) + 1
        shape_count = len(ctx.shapes)
    pages = (await browsers.call("requests", 30, tab=tab))["requests"]
    shapes_streams = _shapes_streams(probes(), kinds, pages)
    warm_probes = [p for p, k in zip(probes(), kinds, strict=True) if k == "warm"]
    cold_probes = [p for p, k in zip(probes(), kinds, strict=True) if k == "cold"]
    measured = warm_probes
    over = production_timeout * 1000
    return {
        "screenshot_ms": percentiles(arrivals),
        "screenshot_sources": _sources(warm_probes, pages),
        "screenshot_over_production_timeout": sum(t > over for t in totals),
        "screenshot_cold_ms": percentiles(cold_arrivals),
        "screenshot_cold_sources": _sources(cold_probes, pages),
        "screenshot_cold_over_production_timeout": sum(t > over for t in cold_totals),
        "screenshot_cold_context_fetch_ms": percentiles(cold_totals),
        "screenshot_cold_stages_ms": stage_times(cold_probes, pages, clock["offset_s"]),
        "screenshot_page_to_image_ms": percentiles([r["ms"] for r in renders[1:]]),
        "screenshot_page_svg_export_ms": percentiles([r["svgMs"] for r in renders[1:]]),
        "screenshot_context_fetch_ms": percentiles(totals),
        "screenshot_stages_ms": stage_times(measured, pages, clock["offset_s"]),
        "screenshot_setup": {
            "shapes_seeded": seeded["shapes"],
            "text": "a quarter of the geo shapes labelled, one shape in ten a text shape"
            if text
            else "none (--screenshot-plain)",
            "shapes_inside_box": seeded["inside"],
            "shapes_in_context": shape_count,
            "box": bounds,
            "max_size": fetcher.max_size,
            "max_bytes": fetcher.max_bytes,
            # The shapes JSON stream as sent by the page (gzip-compressed where it can).
            "shapes_stream_bytes_median": shapes_streams["bytes_median"],
            "shapes_stream_types": shapes_streams["types"],
            "image_dimensions": sorted(list(d) for d in dims if d),
            "image_bytes_median": int(statistics.median(sizes)) if sizes else None,
            "image_types": types,  # media type → warm fetches that carried it
            "requests": requests,
            "warmup_ms": [round(v, 1) for v in first],
            "page_to_image_first_ms": round(renders[0]["ms"], 1),
            "svg_chars": renders[-1]["svgChars"],
            "load_average_1m": os.getloadavg()[0],
            "seconds": round(time.monotonic() - started, 1),
            "production_timeout_s": production_timeout,
            "problems": problems,
            "clock": {k: v for k, v in clock.items() if k != "offset_s"},
            "path": "SnapshotFetcher.fetch → RPC steward.context → host screenshot cache or"
            " editor.toImage (png, re-encoded as webp, or jpeg where the browser cannot encode"
            " webp; q 0.6 → 0.45 → 0.3, then x0.8 scale steps until within max_bytes)"
            " → byte streams agent:screenshot + agent:context (gzip)",
            "user_agent": opened.get("userAgent"),
        },
    }
