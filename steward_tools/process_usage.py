"""How much CPU and memory a process uses, read from /proc and getrusage: the figures the
benches report and the resident size a rig's child process reports of itself."""

from __future__ import annotations

import contextlib
import ctypes
import gc
import os
import resource
from pathlib import Path


def process_tree_cpu_s(pid: int) -> float:
    """CPU seconds of a process, its reaped children, and its live children (one level:
    Postgres backends under the postmaster)."""
    total = 0.0
    ticks = os.sysconf("SC_CLK_TCK")
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        own, ppid = int(proc.name) == pid, int(fields[1])
        if own:
            total += sum(int(f) for f in fields[11:15]) / ticks
        elif ppid == pid:
            total += (int(fields[11]) + int(fields[12])) / ticks
    return total


def thread_cpu_s() -> dict[str, float]:
    """This process's CPU seconds by thread name: the Python thread vs the SDK's native ones."""
    out: dict[str, float] = {}
    ticks = os.sysconf("SC_CLK_TCK")
    for task in Path("/proc/self/task").iterdir():
        try:
            name = (task / "comm").read_text().strip()
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        name = name.rstrip("0123456789-_ ") or name
        out[name] = out.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / ticks
    return out


def busiest_threads(
    before: dict[str, float], after: dict[str, float], *, top: int, digits: int
) -> dict[str, float]:
    """CPU seconds per thread name between two `thread_cpu_s` readings, busiest first."""
    spent = {k: round(v - before.get(k, 0.0), digits) for k, v in after.items()}
    return dict(sorted(spent.items(), key=lambda kv: -kv[1])[:top])


def self_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def self_rss_mb(*, trim: bool = False) -> float:
    """This process's resident memory in MB. With `trim`, first hand the heap's free pages back
    to the system (a full `gc.collect`, then glibc's `malloc_trim`), so the figure is memory
    still in use, not memory freed but kept by the allocator."""
    if trim:
        gc.collect()  # cycles the attacks left are garbage, not growth
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL("libc.so.6").malloc_trim(0)
    return rss_mb("self")


def rss_mb(pid: int | str) -> float:
    """A process's resident memory (`pid` or "self"), in MB; 0 once it is gone."""
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0
