"""`steward rooms [ROOM] [--json]`: what a running steward's rooms are doing now, from its
`GET /api/rooms` (needs STEWARD_API_KEY; `--url` picks another steward)."""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from typing import Any

import aiohttp

from steward.commands.setup import print_json, setup

COLUMNS = (
    "room",
    "host",
    "people",
    "session",
    "fairy",
    "mode",
    "seq",
    "unacked",
    "budget $",
    "idle s",
)


def table(rooms: list[dict[str, Any]], now: float) -> str:
    """One line per running session (a room without any gets one line of its own)."""
    rows: list[tuple[str, ...]] = []
    for r in rooms:
        left = r.get("budget_left_usd")
        common = (
            str(r["room"]),
            str(r.get("host") or "-"),
            str(len(r.get("participants", []))),
        )
        tail = (
            "-" if left is None else f"{left:.2f}",
            f"{max(0.0, now - float(r.get('last_activity_at', now))):.0f}",
        )
        sessions = r.get("sessions") or [{}]
        for s in sessions:
            rows.append(
                (
                    *common,
                    str(s.get("session_id", "-")),
                    str(s.get("fairy") or "-"),
                    str(s.get("mode") or "-"),
                    str(s.get("seq", "-")),
                    str(s.get("unacked", r.get("unacked", 0))),
                    *tail,
                )
            )
    widths = [max(len(c), *(len(row[i]) for row in rows)) for i, c in enumerate(COLUMNS)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(COLUMNS, widths, strict=True))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)) for row in rows]
    return "\n".join(line.rstrip() for line in lines)


async def fetch(url: str, key: str, room: str | None) -> list[dict[str, Any]]:
    path = f"{url.rstrip('/')}/api/rooms" + (f"/{room}" if room else "")
    headers = {"Authorization": f"Bearer {key}"}
    async with aiohttp.ClientSession() as http, http.get(path, headers=headers) as resp:
        body = await resp.json()
        if resp.status != 200:
            raise SystemExit(f"steward rooms: HTTP {resp.status}: {body.get('error')}")
    return [body] if room else list(body["rooms"])


def _run(args: argparse.Namespace) -> int:
    settings = setup()
    key = settings.steward_api_key.get_secret_value() if settings.steward_api_key else ""
    if not key:
        sys.stderr.write("steward rooms: set STEWARD_API_KEY (the steward's API key)\n")
        return 2
    url = args.url or f"http://{settings.steward_http_host}:{settings.steward_http_port}"
    rooms = asyncio.run(fetch(url, key, args.room))
    if args.json:
        print_json({"rooms": rooms})
    elif rooms:
        sys.stdout.write(table(rooms, time.time()) + "\n")
    else:
        sys.stdout.write("no rooms served\n")
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser("rooms", help="what each served room is doing now (GET /api/rooms)")
    p.add_argument("room", nargs="?", help="one room only")
    p.add_argument("--url", help="the steward's HTTP base URL (default: from settings)")
    p.add_argument("--json", action="store_true", help="print the JSON instead of a table")
    p.set_defaults(handler=_run)
