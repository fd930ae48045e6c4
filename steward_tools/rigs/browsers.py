"""Chromium tabs for the benchmarks: the client-bridge demo page in real browsers.

`client-bridge/bench/browsers.mjs` (playwright-core driving /usr/bin/chromium, one browser
with a fresh profile per tab) runs as a subprocess, commanded with one JSON line per request.
This module serves the built demo page and its dev token endpoint, drives that process, and
maps the page's wall-clock timestamps (`performance.timeOrigin + performance.now()`, epoch
ms) onto this process's CLOCK_MONOTONIC: both clocks are read on the same machine, and
`clock_check` verifies the mapping against a round trip before any figure is trusted.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from steward.obs.logging import get_logger
from steward.room.runtime import RoomRuntime
from steward.service import StewardService
from steward_tools.waiting import bounded, wait_until

log = get_logger(__name__)

BRIDGE = Path(__file__).resolve().parents[2] / "client-bridge"
DRIVER = BRIDGE / "bench" / "browsers.mjs"
DIST = BRIDGE / "demo" / "dist"
# The Node `make setup` links from PyPI (ops/install-node.sh), else whatever is on PATH.
PROJECT_NODE = BRIDGE.parent / ".tools" / "node" / "bin" / "node"


def wall_offset_s() -> float:
    """time.time() - time.monotonic(): add to a monotonic instant to get wall time."""
    return time.time() - time.monotonic()


# Settings for a bench stack whose steward serves the demo page (see PageServer).
PAGE_SETTINGS = {"steward_dev_tokens": True, "steward_demo_dir": DIST}


class PageServer:
    """The built demo page and its dev token endpoint, served by a bench's own steward (start
    it with `PAGE_SETTINGS`)."""

    def __init__(self, service: StewardService) -> None:
        self.service = service
        self.url = ""

    async def start(self) -> str:
        if not (DIST / "index.html").exists():
            raise RuntimeError(
                f"{DIST} is missing: build the demo first (npm --prefix client-bridge run build)"
            )
        port = await self.service.start_http()
        self.url = f"http://127.0.0.1:{port}"
        return self.url

    async def close(self) -> None:
        return None  # the service stops its HTTP server when the stack closes


async def spawn_node_driver(script: Path) -> asyncio.subprocess.Process:
    """A Node driver script of client-bridge, talking JSON lines on stdin/stdout, in a
    session of its own (so it and its helpers can be ended together)."""
    node = str(PROJECT_NODE) if PROJECT_NODE.exists() else shutil.which("node")
    if node is None:
        raise RuntimeError("no Node: run `make setup-node` (the driver needs Node >= 22.12)")
    return await asyncio.create_subprocess_exec(
        node,
        str(script),
        cwd=BRIDGE,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        limit=64 * 1024 * 1024,
        start_new_session=True,
    )


async def stop_node_driver(
    proc: asyncio.subprocess.Process, ask_close: Callable[[], Awaitable[object]]
) -> None:
    """Ask a driver to close, give it 10 s to exit, then SIGKILL its session (node and its
    helpers)."""
    if proc.returncode is None:
        with contextlib.suppress(Exception):
            await ask_close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(proc.wait(), 10)
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # our own session
        await proc.wait()


class Browsers:
    """The Node driver process and the Chromium browsers it launched."""

    def __init__(self) -> None:
        self.proc: asyncio.subprocess.Process | None = None
        self._next = 0
        self._stderr = bytearray()
        self._drain: asyncio.Task[None] | None = None
        self.profile_dirs: list[str] = []

    async def start(self, timeout: float = 30) -> None:
        self.proc = await spawn_node_driver(DRIVER)
        self._drain = asyncio.ensure_future(self._drain_stderr())
        line = await bounded(self._line(), timeout, "starting the browser driver")
        if line.get("event") != "ready":
            raise RuntimeError(f"browser driver: {line}")

    async def _drain_stderr(self) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        while chunk := await self.proc.stderr.read(4096):
            self._stderr += chunk
            del self._stderr[:-8192]

    async def _line(self) -> dict[str, Any]:
        assert self.proc is not None and self.proc.stdout is not None
        raw = await self.proc.stdout.readline()
        if not raw:
            tail = self._stderr.decode(errors="replace")[-2000:]
            raise RuntimeError(f"the browser driver exited early\n{tail}")
        value: dict[str, Any] = json.loads(raw)
        return value

    async def call(self, cmd: str, timeout: float = 60, **args: Any) -> dict[str, Any]:
        assert self.proc is not None and self.proc.stdin is not None
        self._next += 1
        ident = self._next
        self.proc.stdin.write((json.dumps({"id": ident, "cmd": cmd, **args}) + "\n").encode())
        await self.proc.stdin.drain()

        async def reply() -> dict[str, Any]:
            while True:
                line = await self._line()
                if line.get("id") == ident:
                    return line

        line: dict[str, Any] = await bounded(reply(), timeout, f"browser command {cmd}")
        if not line.get("ok"):
            raise RuntimeError(f"browser command {cmd} failed: {line.get('error')}")
        return line

    async def open(self, page: str, room: str, count: int, timeout: float = 90) -> dict[str, Any]:
        """Open `count` tabs on `room`: `{tabs: [{index, identity, dir}], userAgent}`."""
        reply = await self.call("open", timeout, page=page, room=room, count=count)
        self.profile_dirs += [t["dir"] for t in reply["tabs"]]
        return reply

    async def clock_check(self, tab: int, samples: int = 5) -> dict[str, Any]:
        """Map the page clock onto ours; every sample must land inside its round trip."""
        offset = wall_offset_s()
        worst, inside, trips = 0.0, True, []
        for _ in range(samples):
            t0 = time.monotonic()
            wall_ms = (await self.call("clock", 10, tab=tab))["wallMs"]
            t1 = time.monotonic()
            mapped = wall_ms / 1000 - offset
            # Chromium coarsens performance.now() to 0.1 ms without cross-origin isolation.
            inside = inside and t0 - 0.0002 <= mapped <= t1 + 0.0002
            worst = max(worst, abs(mapped - (t0 + t1) / 2) * 1000)
            trips.append((t1 - t0) * 1000)
        return {
            "offset_s": offset,
            "page_clock_inside_round_trip": inside,
            "max_abs_error_ms": round(worst, 3),
            "round_trip_ms": round(max(trips), 3),
        }

    async def close(self) -> None:
        proc = self.proc
        if proc is None:
            return
        await stop_node_driver(proc, lambda: self.call("close", 30))
        # Playwright starts each Chromium in a process group of its own; if the driver died
        # without closing them, end the ones using our profile directories (by pid).
        for pid in _pids_with_profile(self.profile_dirs):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        for d in self.profile_dirs:
            shutil.rmtree(d, ignore_errors=True)
        if self._drain is not None:
            self._drain.cancel()


def _pids_with_profile(dirs: list[str]) -> list[int]:
    if not dirs:
        return []
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if any(f"--user-data-dir={d}" in cmdline for d in dirs):
            out.append(int(entry.name))
    return out


async def wait_host(runtime: RoomRuntime, identity: str, timeout: float = 30) -> None:
    await wait_until(lambda: runtime.participants.host == identity, timeout, "host elected")
