"""`steward livekit`: run the loopback-only livekit-server in the foreground."""

from __future__ import annotations

import argparse
import time
from typing import Any


def _run(args: argparse.Namespace) -> int:
    from steward_tools.livekit_server import LiveKitServer

    server = LiveKitServer(http_port=args.port).start()
    print(f"livekit-server on {server.url} (key {server.api_key}); Ctrl-C stops it", flush=True)
    try:
        while server.proc is not None and server.proc.poll() is None:
            time.sleep(0.5)
        print(server.tail_log())
        return 1
    except KeyboardInterrupt:
        return 0
    finally:
        server.stop()


def register(sub: Any) -> None:
    p = sub.add_parser("livekit", help="run a loopback-only livekit-server (dev)")
    p.add_argument("--port", type=int, default=7880)
    p.set_defaults(handler=_run)
