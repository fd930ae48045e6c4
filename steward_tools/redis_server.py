"""Runs a throwaway redis-server on 127.0.0.1 (several livekit-server nodes share it)."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from steward_tools.child_process import stop_child
from steward_tools.livekit_server import free_port, start_on_free_ports


class RedisNotInstalled(RuntimeError):
    """No redis-server binary was found (`make setup-redis` installs one)."""


def _binary(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise RedisNotInstalled(
            f"{name} not found; install Debian's redis-server (`make setup-redis`)"
        )
    return found


@dataclass
class RedisServer:
    """A redis-server child process on a free loopback port: no persistence, its own
    directory, gone after `stop()`."""

    port: int = 0
    proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    _tmp: tempfile.TemporaryDirectory[str] | None = field(default=None, repr=False)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self, timeout: float = 10.0) -> RedisServer:
        """On the given port, or on a free one (a new one if it is taken before binding)."""
        if self.port:
            return self._start_once(timeout)

        def pick_again() -> None:
            self.port = 0

        return start_on_free_ports(lambda: self._start_once(timeout), pick_again)

    def _start_once(self, timeout: float) -> RedisServer:
        binary = _binary("redis-server")
        self.port = self.port or free_port()
        self._tmp = tempfile.TemporaryDirectory(prefix="steward-redis-")
        log = (Path(self._tmp.name) / "redis.log").open("ab")
        # No RDB snapshots, no append-only file: a test's Redis holds nothing worth keeping.
        args = ["--port", str(self.port), "--bind", "127.0.0.1", "--dir", self._tmp.name]
        args += ["--save", "", "--appendonly", "no", "--daemonize", "no"]
        self.proc = subprocess.Popen(
            [binary, *args], stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                tail = self.tail_log()
                self.stop()
                raise RuntimeError(f"redis-server exited early:\n{tail}")
            if self.command("PING", check=False) == "PONG":
                return self
            time.sleep(0.05)
        self.stop()
        raise TimeoutError(f"redis-server not ready after {timeout}s")

    def command(self, *args: str, check: bool = True) -> str:
        """One command through redis-cli (comes with redis-server); its raw reply text."""
        done = subprocess.run(
            [_binary("redis-cli"), "-h", "127.0.0.1", "-p", str(self.port), "--raw", *args],
            capture_output=True,
            check=check,
            timeout=10,
        )
        return done.stdout.decode(errors="replace").strip()

    def hash(self, key: str) -> dict[str, str]:
        """HGETALL as a dict (field -> value), values as text."""
        lines = self.command("HGETALL", key).splitlines()
        return dict(zip(lines[::2], lines[1::2], strict=True))

    def tail_log(self, lines: int = 20) -> str:
        if self._tmp is None:
            return ""
        path = Path(self._tmp.name) / "redis.log"
        text = path.read_text(errors="replace") if path.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    def stop(self) -> None:
        stop_child(self.proc, self._tmp)
        self.proc, self._tmp = None, None
