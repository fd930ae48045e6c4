"""The composition root: settings, database, per-room runtimes, the agent runner, HTTP API.

`steward join`, `steward worker`, `steward dev` and `steward demo` all build one
`StewardService`; rooms are attached either by connecting directly (`join`) or by handing
over a room the livekit-agents worker already connected (`attach`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from aiohttp import web
from livekit import rtc

from steward.api.app import RunRefused, create_app
from steward.config import Settings
from steward.fairies.fixed_script import FixedScriptRunner
from steward.fairies.ports import AgentRunner, PromptInput
from steward.obs.logging import get_logger
from steward.protocol.messages import Box
from steward.room.connection import RoomDeps, RoomRuntime, connect_direct
from steward.store.database import Database, open_database
from steward.store.outbox import Outbox

log = get_logger(__name__)

RunnerFactory = Callable[[], AgentRunner]


def default_runner(settings: Settings) -> RunnerFactory:
    """The canvas agent (one per process, so it keeps each room's chat history); falls back
    to the fixed action script if the agent core cannot be imported."""
    try:
        from steward.fairies.agent import AgentConfig, CanvasAgent
    except ImportError as err:
        log.warning("agent_unavailable_using_fixed_script", error=str(err))
        return lambda: FixedScriptRunner()
    agent = CanvasAgent(AgentConfig(settings=settings))
    return lambda: agent


class StewardService:
    def __init__(
        self,
        settings: Settings,
        *,
        database: Database | None = None,
        runner: RunnerFactory | None = None,
    ) -> None:
        self.settings = settings
        self._own_db = database is None
        self.db = database
        self.runner = runner or default_runner(settings)
        self.rooms: dict[str, RoomRuntime] = {}
        self._http: web.AppRunner | None = None
        self.http_port: int | None = None
        self._lock = asyncio.Lock()

    @property
    def outbox(self) -> Outbox:
        assert self.db is not None, "service not started"
        return Outbox(self.db.pool)

    def _deps(self) -> RoomDeps:
        return RoomDeps(settings=self.settings, outbox=self.outbox, runner=self.runner)

    async def start(self, *, http: bool = True) -> StewardService:
        if self.db is None:
            self.db = await open_database(self.settings)
        if http:
            await self.start_http()
        return self

    async def start_http(self) -> int:
        app = create_app(self)
        self._http = web.AppRunner(app, access_log=None)
        await self._http.setup()
        site = web.TCPSite(
            self._http, self.settings.steward_http_host, self.settings.steward_http_port
        )
        await site.start()
        server = site._server
        sockets = getattr(server, "sockets", None) or []
        self.http_port = int(sockets[0].getsockname()[1]) if sockets else None
        log.info("http_listening", host=self.settings.steward_http_host, port=self.http_port)
        return self.http_port or 0

    async def join(self, room_name: str) -> RoomRuntime:
        """Direct mode: connect to `room_name` with the steward's own token."""
        async with self._lock:
            if room_name in self.rooms and not self.rooms[room_name].closed.is_set():
                return self.rooms[room_name]
            runtime = await connect_direct(self.settings, room_name, self._deps())
            self._track(runtime)
            return runtime

    async def attach(self, room: rtc.Room, room_name: str | None = None) -> RoomRuntime:
        """Worker mode: a room the livekit-agents worker connected for us."""
        name = room_name or room.name
        runtime = await RoomRuntime(room, name, self._deps()).start()
        self._track(runtime)
        return runtime

    def _track(self, runtime: RoomRuntime) -> None:
        self.rooms[runtime.room_id] = runtime

    async def leave(self, room_name: str) -> None:
        runtime = self.rooms.pop(room_name, None)
        if runtime is not None:
            await runtime.close()

    # --- API backend ---------------------------------------------------------------------
    async def run_http(
        self, room_id: str, message: str, model: str | None, viewport: Box | None
    ) -> str:
        runtime = self.rooms.get(room_id)
        if runtime is None or runtime.closed.is_set():
            raise RunRefused(404, f"this steward does not serve room {room_id!r}")
        prompt = PromptInput(
            message=message, source="http", requester="http", bounds=viewport, model=model
        )
        return await runtime.run_prompt(prompt)

    async def readiness(self) -> dict[str, Any]:
        db_ok = False
        if self.db is not None:
            with contextlib.suppress(Exception):
                db_ok = await asyncio.wait_for(self.db.pool.fetchval("SELECT 1"), 2) == 1
        rooms = {
            rid: {
                "participants": len(r.participants.all()),
                "host": r.participants.host,
                "active_sessions": r.dispatcher.active,
                "unacked": r.broadcaster.total_unacked(),
            }
            for rid, r in self.rooms.items()
            if not r.closed.is_set()
        }
        return {"db": db_ok, "rooms": rooms, "ready": db_ok}

    async def close(self) -> None:
        for name in list(self.rooms):
            await self.leave(name)
        if self._http is not None:
            await self._http.cleanup()
            self._http = None
        if self._own_db and self.db is not None:
            await self.db.close()
            self.db = None
