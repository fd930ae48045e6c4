"""The stack dump an operator asks a worker for must not harm the worker."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from steward.obs import stack_dump
from tests.support.dumps import dump_after_burst

ROOT = Path(__file__).resolve().parents[2]

# Threads come and go all the time, as livekit's native threads calling into Python do.
_CHURN = """
import threading, time
from steward.obs import stack_dump
stack_dump.install()

def deep(n):
    return deep(n - 1) if n else 0

def work():
    for _ in range(50):
        deep(30)

def spawner():
    while True:
        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

for _ in range(3):
    threading.Thread(target=spawner, daemon=True).start()
print("ready", flush=True)
time.sleep(60)
"""


def test_a_burst_of_dump_signals_leaves_a_busy_process_running(tmp_path: Path) -> None:
    # faulthandler's all-threads dump on the same signal crashed this process (SIGSEGV)
    # within a few dozen signals; the stacks are read under the interpreter's locks instead.
    err = tmp_path / "stderr.txt"
    with err.open("wb") as sink:
        proc = subprocess.Popen(
            [sys.executable, "-c", _CHURN],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=sink,
        )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline() == b"ready\n"
        sent = 0
        deadline = time.monotonic() + 3.0
        while time.monotonic() < deadline and proc.poll() is None:
            os.kill(proc.pid, stack_dump.SAFE_SIGNAL)
            sent += 1
            time.sleep(0.002)
        dump_after_burst(proc.pid, lambda: err.read_text(errors="replace"))
        assert proc.poll() is None, f"exited {proc.returncode} after {sent} signals"
        text = err.read_text(errors="replace")
        assert text.count(stack_dump.HEADER) >= 10
        assert "--- thread MainThread" in text
        assert "in spawner" in text
        assert "Error" not in text
    finally:
        proc.kill()
        proc.wait()


def test_format_stacks_names_every_thread() -> None:
    stop = threading.Event()
    t = threading.Thread(target=stop.wait, name="sleeper")
    t.start()
    try:
        text = stack_dump.format_stacks()
    finally:
        stop.set()
        t.join()
    assert text.startswith(stack_dump.HEADER)
    assert "--- thread sleeper" in text
    assert "--- thread MainThread" in text
    assert "in test_format_stacks_names_every_thread" in text
