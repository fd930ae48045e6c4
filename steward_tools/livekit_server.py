"""Runs a loopback-only livekit-server process (dev stack, demo, tests, benchmarks)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import yaml

from steward.config import DEV_API_KEY, DEV_API_SECRET, PROJECT_ROOT
from steward_tools.child_process import stop_child

LIVEKIT_VERSION = "v1.13.5"
TOOLS_BIN = PROJECT_ROOT / ".tools" / "bin" / "livekit-server"
BASE_CONFIG = PROJECT_ROOT / "ops" / "livekit.yaml"


class LiveKitNotInstalled(RuntimeError):
    """No livekit-server binary was found (`make setup` installs one)."""


def find_binary() -> Path:
    if TOOLS_BIN.exists():
        return TOOLS_BIN
    found = shutil.which("livekit-server")
    if found:
        return Path(found)
    raise LiveKitNotInstalled(
        f"livekit-server {LIVEKIT_VERSION} not found; run ops/install-livekit.sh (or `make setup`)"
    )


_T = TypeVar("_T")
# How a child server says a port is taken, and how often it is started on new ones then.
PORT_TAKEN = "address already in use"
PORT_ATTEMPTS = 3


def free_port(kind: int = socket.SOCK_STREAM) -> int:
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_on_free_ports(start_once: Callable[[], _T], pick_again: Callable[[], None]) -> _T:
    """`start_once()` a child server on ports `free_port` found. A port found free can be
    taken by any connection's local port before the child binds it: when the child exits
    saying so (a RuntimeError naming it), `pick_again()` clears the ports and it is retried."""
    attempt = 1
    while True:
        try:
            return start_once()
        except RuntimeError as err:
            if attempt == PORT_ATTEMPTS or PORT_TAKEN not in str(err).lower():
                raise
        attempt += 1
        pick_again()


def render_config(http_port: int, tcp_port: int, udp_port: int, redis: str | None = None) -> str:
    """The committed loopback config with the given ports and the dev key pair; with `redis`
    (host:port) the node joins LiveKit's multi-node mode on that Redis."""
    conf = yaml.safe_load(BASE_CONFIG.read_text())
    conf["port"] = http_port
    conf["rtc"]["tcp_port"] = tcp_port
    conf["rtc"]["udp_port"] = udp_port
    conf["keys"] = {DEV_API_KEY: DEV_API_SECRET}
    if redis is not None:
        conf["redis"] = {"address": redis}
        # A new room goes to the node hosting the fewest rooms (the default picks at random).
        conf["node_selector"] = {"kind": "any", "sort_by": "rooms", "algorithm": "lowest"}
    return str(yaml.safe_dump(conf, sort_keys=False))


# Redis hashes of multi-node LiveKit: node id -> node (with its stats), room -> node id.
NODES_KEY = "nodes"
ROOM_NODE_KEY = "room_node_map"
_NODE_ID = re.compile(r'"nodeID": "(ND_\w+)"')


@dataclass
class LiveKitServer:
    """A livekit-server child process on 127.0.0.1; `stop()` ends it."""

    http_port: int = 0
    tcp_port: int = 0
    udp_port: int = 0
    redis: str | None = None  # host:port of a Redis shared with other nodes
    log_path: Path | None = None
    proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    _tmp: tempfile.TemporaryDirectory[str] | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.http_port}"

    @property
    def api_key(self) -> str:
        return DEV_API_KEY

    @property
    def api_secret(self) -> str:
        return DEV_API_SECRET

    def start(self, timeout: float = 20.0) -> LiveKitServer:
        """Start on the given ports, or on free ones. A port found free can be taken by
        someone else's connection before livekit-server binds it: then new ones are tried."""
        if self.http_port or self.tcp_port or self.udp_port:  # the caller's: kept as given
            return self._start_once(timeout)
        own_log = self.log_path is None

        def pick_again() -> None:
            self.http_port = self.tcp_port = self.udp_port = 0
            if own_log:  # it was in the failed attempt's removed directory
                self.log_path = None

        return start_on_free_ports(lambda: self._start_once(timeout), pick_again)

    def _start_once(self, timeout: float) -> LiveKitServer:
        binary = find_binary()
        self.http_port = self.http_port or free_port()
        self.tcp_port = self.tcp_port or free_port()
        self.udp_port = self.udp_port or free_port(socket.SOCK_DGRAM)
        self._tmp = tempfile.TemporaryDirectory(prefix="steward-lk-")
        cfg = Path(self._tmp.name) / "livekit.yaml"
        cfg.write_text(render_config(self.http_port, self.tcp_port, self.udp_port, self.redis))
        log_path = self.log_path or Path(self._tmp.name) / "livekit.log"
        self.log_path = log_path
        log = log_path.open("ab")
        env = {k: v for k, v in os.environ.items() if not k.startswith("LIVEKIT_")}
        self.proc = subprocess.Popen(
            [str(binary), "--config", str(cfg)],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
        log.close()
        self._wait_ready(timeout)
        return self

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                tail = self.tail_log()
                self.stop()
                raise RuntimeError(f"livekit-server exited early:\n{tail}")
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.http_port), timeout=0.2) as s,
            ):
                s.sendall(b"GET / HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
                if s.recv(16).startswith(b"HTTP/1."):
                    return
            time.sleep(0.05)
        self.stop()
        raise TimeoutError(f"livekit-server not ready after {timeout}s:\n{self.tail_log()}")

    async def astart(self, timeout: float = 20.0) -> LiveKitServer:
        return await asyncio.to_thread(self.start, timeout)

    @property
    def node_id(self) -> str:
        """The id this node announced at start (`ND_…`; room_node_map's values)."""
        found = (
            _NODE_ID.search(self.log_path.read_text(errors="replace")) if self.log_path else None
        )
        if found is None:
            raise RuntimeError(f"no node id in the livekit-server log:\n{self.tail_log()}")
        return found.group(1)

    def tail_log(self, lines: int = 30) -> str:
        if self.log_path is None or not self.log_path.exists():
            return ""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def stop(self) -> None:
        stop_child(self.proc, self._tmp)
        self.proc, self._tmp = None, None
