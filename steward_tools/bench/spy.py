"""`bench scale --profile`: py-spy samples the steward process from outside, no code changes.

Two samplers run for the measured part of the run: one writes collapsed stacks (the input of
any flame graph tool; speedscope opens it as is), the other an SVG flame graph. The collapsed
stacks are then sorted into phases (parser, outbox INSERT, LiveKit publish, ...) so a top-N
table per phase says where the steward's CPU goes. py-spy sees Python threads only: CPU the
LiveKit FFI spends in its own native threads shows in the bench's `steward_cpu_s_by_thread`.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from steward.obs.logging import get_logger

log = get_logger(__name__)

RATE_HZ = 100
# Phase rules, first match wins: a sample belongs to the first phase any frame of its stack
# matches, so work done *for* a phase (pydantic under the ack decode) counts in that phase.
PHASES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("logging", ("structlog", "logging/__init__", "obs/logging")),
    ("ack decode and flush", ("_on_data", "on_ack", "flush_acks", "record_acks")),
    ("outbox INSERT", ("outbox.py", "asyncpg")),
    ("LiveKit publish (FFI)", ("publish_data", "ffi_router", "ffi_client", "livekit/rtc")),
    ("envelope encode", ("to_wire", "envelopes.py", "_number")),
    ("retransmit loop", ("retransmit_due", "_retransmit_loop")),
    ("context fetch and inflate", ("room/inbound/stream_inbox", "gzip", "zlib", "pictures")),
    ("prompt build", ("prompt_parts", "scripted/reading", "scripted/seen", "fairies/prompt")),
    ("sanitize/resolve", ("actions/", "canvas/")),
    ("parser", ("model/parser",)),
    ("scripted model (bench's stand-in)", ("model/scripted",)),
    ("asyncio event loop", ("asyncio/", "selectors", "uvloop")),
)
OTHER = "other"
# py-spy cannot tell a thread blocked in epoll from a busy one when it never pauses the
# process: samples whose leaf is the selector's wait are idle time, kept apart.
IDLE = "idle (event loop waiting in epoll)"
_IDLE_LEAF = "Selector.select (selectors.py"


@dataclass
class PhaseTable:
    """Samples per phase, and the hottest leaf frames within each."""

    total: int = 0
    phases: Counter[str] = field(default_factory=Counter)
    leaves: dict[str, Counter[str]] = field(default_factory=dict)

    def add(self, frames: list[str], count: int) -> None:
        phase = classify(frames)
        self.total += count
        self.phases[phase] += count
        leaf = frames[-1] if frames else "?"
        self.leaves.setdefault(phase, Counter())[leaf] += count

    @property
    def busy(self) -> int:
        return self.total - self.phases[IDLE]

    def rows(self, top: int) -> list[tuple[str, int, list[tuple[str, int]]]]:
        """(phase, samples, hottest leaf frames), busy phases by descending samples."""
        ranked = [p for p, _ in self.phases.most_common() if p != IDLE]
        return [(p, self.phases[p], self.leaves[p].most_common(top)) for p in ranked]

    def summary(self, top: int) -> list[dict[str, object]]:
        return [
            {
                "phase": phase,
                "samples": n,
                "share_of_busy": round(n / self.busy, 3) if self.busy else 0.0,
                "top": [{"frame": f, "samples": c} for f, c in leaves],
            }
            for phase, n, leaves in self.rows(top)
        ]

    def markdown(self, top: int) -> str:
        lines = [
            "| phase | share of busy samples | hottest frames (samples) |",
            "| --- | --- | --- |",
        ]
        for phase, n, leaves in self.rows(top):
            frames = "; ".join(f"`{f}` ({c})" for f, c in leaves)
            lines.append(f"| {phase} | {n / max(1, self.busy):.1%} | {frames} |")
        tail = f"{self.busy} busy samples of {self.total} at {RATE_HZ} Hz (the rest: {IDLE})."
        return "\n".join(lines) + f"\n\n{tail}\n"


def classify(frames: list[str]) -> str:
    if frames and _IDLE_LEAF in frames[-1]:
        return IDLE
    for phase, needles in PHASES:
        if any(n in frame for frame in frames for n in needles):
            return phase
    return OTHER


def read_collapsed(path: Path) -> PhaseTable:
    """Parse py-spy's `raw` output: `frame;frame;...;leaf count` per line."""
    table = PhaseTable()
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        table.add(stack.split(";"), int(count))
    return table


class Sampler:
    """py-spy attached to this process (`--nonblocking`: the steward is never paused)."""

    def __init__(self, directory: Path, name: str) -> None:
        self.collapsed = directory / f"{name}.collapsed.txt"
        self.svg = directory / f"{name}.svg"
        self._procs: list[subprocess.Popen[bytes]] = []
        exe = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
        for out, fmt in ((self.collapsed, "raw"), (self.svg, "flamegraph")):
            argv = [exe, "record", "--pid", str(os.getpid()), "--rate", str(RATE_HZ)]
            argv += ["--nonblocking", "--format", fmt, "--output", str(out)]
            self._procs.append(
                subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            )

    def stop(self, top: int = 5) -> PhaseTable:
        """SIGINT makes py-spy write its file; then the collapsed stacks are sorted."""
        for proc in self._procs:
            proc.send_signal(signal.SIGINT)
        for proc in self._procs:
            try:
                _, err = proc.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                _, err = proc.communicate()
            if proc.returncode not in (0, -signal.SIGINT):
                log.warning("py_spy_failed", code=proc.returncode, stderr=err.decode()[-300:])
        if not self.collapsed.exists():
            raise RuntimeError(f"py-spy wrote no profile to {self.collapsed}")
        table = read_collapsed(self.collapsed)
        (self.collapsed.parent / f"{self.collapsed.name.split('.')[0]}.phases.md").write_text(
            table.markdown(top)
        )
        return table
