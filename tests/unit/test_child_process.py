"""A tied child ends with its parent, however the parent ends (the faults bench's steward)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from steward_tools.child_process import tied_to_parent

# A parent that starts a tied `sleep`, says its pid, and waits to be killed.
PARENT = """\
import subprocess, sys
from steward_tools.child_process import tied_to_parent
child = subprocess.Popen(tied_to_parent(["/bin/sleep", "60"]))
print(child.pid, flush=True)
child.wait()
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie waits for its reaper (init here): gone all the same
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ", 1)[1][0] != "Z"
    except FileNotFoundError:
        return False


def test_a_tied_child_is_killed_when_its_parent_is_sigkilled() -> None:
    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE)
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        deadline = time.monotonic() + 10
        while not os.readlink(f"/proc/{child}/exe").endswith("sleep"):  # exec'd in place
            assert time.monotonic() < deadline, "the child never ran its program"
            time.sleep(0.02)
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=10)
        while _alive(child):
            assert time.monotonic() < deadline + 10, "the child outlived its parent"
            time.sleep(0.02)
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait(timeout=10)


def test_the_tied_command_runs_the_program_with_its_arguments() -> None:
    out = subprocess.run(
        tied_to_parent(["/bin/echo", "one", "two"]), capture_output=True, timeout=30, check=True
    )
    assert out.stdout == b"one two\n"
