"""The composition root: settings, database, per-room runtimes, the agent runner, HTTP API.

`steward join`, `steward worker`, `steward dev` and `steward demo` all build one
`StewardService`; rooms are attached either by connecting directly (`join`) or by handing
over a room the livekit-agents worker already connected (`attach`).

Every prompt goes through `PromptRouter` (steward/fairies/prompt_router.py): prompts that name a
fairy or start with `project:` go to the room's fairies (`FairyRuntime`, one per process,
state in Postgres), the rest to the one-shot agent. Each fairy that works opens its own
run in its room's sessions (`SessionsByRoom`, own id, own seq); a joined room first resumes
whatever its fairies left unfinished, and fairy presence goes out on `agent:fairies`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from aiohttp import web
from livekit import rtc

from steward import ffi_router
from steward.access import mint_token
from steward.api.app import RunAccepted, RunRefused, create_app
from steward.config import Settings
from steward.fairies.one_shot_runner import OneShotConfig, OneShotRunner
from steward.fairies.project_steering import PublishProject
from steward.fairies.prompt_router import PromptRouter
from steward.fairies.role_models import models_from_settings
from steward.fairies.roster import Publish
from steward.fairies.runtime import FairyRuntime
from steward.obs.gc_pauses import watch_gc_pauses
from steward.obs.logging import get_logger
from steward.ports import AgentRunner, PromptInput
from steward.protocol.box import Box
from steward.protocol.messages import FairiesMessage, ProjectState
from steward.room.connect import connect_direct
from steward.room.deps import RoomDeps
from steward.room.owners import HTTP_OWNER, queued_owner
from steward.room.runs.sessions import RoomSessions, SessionsByRoom, new_session_id
from steward.room.runtime import RoomRuntime
from steward.room.workers.livekit_admin import LiveKitAdmin
from steward.store.conversation import ConversationRepo
from steward.store.crew import CrewStore
from steward.store.database import DEFAULT_POOL_SIZE, Database, open_database
from steward.store.fairies import FairyStore
from steward.store.grants import GrantBindings
from steward.store.leases import Lease, LeaseHeld, LeaseKeeper, RoomLeases, worker_id
from steward.store.liveness import Liveness, process_liveness
from steward.store.outbox import Outbox
from steward.store.project_runs import ProjectRuns
from steward.store.queued_runs import QueuedRun, QueuedRuns, RunBell
from steward.store.usage import LazyUsage, UsageRepo
from steward.task_set import TaskSet, close_within
from steward.turns.model_budget import RoomBudget
from steward.voice.engines import speech_engine

log = get_logger(__name__)

RunnerFactory = Callable[[], AgentRunner]


def default_runner(settings: Settings, usage: LazyUsage | None = None) -> RunnerFactory:
    """The canvas agent (one per process; its one-shotting fairies live on the service's fairy
    runtime once it starts), checking the room's daily budget and recording usage when given
    `usage`."""
    agent = OneShotRunner(OneShotConfig(settings=settings, usage=usage))
    return lambda: agent


class Draining(RuntimeError):
    """The steward is shutting down (SIGTERM) and takes no more rooms."""


class StewardService:
    """The whole steward in one process: settings, database, room runtimes, the agent runner and the
    HTTP API."""

    def __init__(
        self,
        settings: Settings,
        *,
        database: Database | None = None,
        runner: RunnerFactory | None = None,
        fairies: bool = True,
        pool_size: int = DEFAULT_POOL_SIZE,
    ) -> None:
        self.settings = settings
        self._pool_size = pool_size  # per pool, when the service opens its own database
        self._own_db = database is None
        self.db = database
        self.usage = LazyUsage(lambda: self.db.pool if self.db is not None else None)
        self._one_shot = runner or default_runner(settings, self.usage)
        self._use_fairies = fairies
        self.fairies: FairyRuntime | None = None
        self.rooms: dict[str, RoomRuntime] = {}
        self._http: web.AppRunner | None = None
        self.http_port: int | None = None
        self._lock = asyncio.Lock()
        self._outbox: Outbox | None = None
        # The rooms' leases (steward/store/leases.py), renewed while this service runs.
        self.leases: LeaseKeeper | None = None
        self.owner = worker_id()
        # Our own liveness lock, when the process holds none for its stewards (not a worker).
        self._liveness: Liveness | None = None
        self._lost = TaskSet("room_give_up_failed")
        # Per served room: the loop that takes the HTTP runs queued for it (`_take_queued`).
        self._pickups: dict[str, asyncio.Task[None]] = {}
        # One poll for the runs queued to every served room (it wakes their pickups).
        self._bell: RunBell | None = None
        self._bell_task: asyncio.Task[None] | None = None
        self._livekit_admin: LiveKitAdmin | None = None
        self.draining = False

    @property
    def outbox(self) -> Outbox:
        """One per service, shared by every room."""
        assert self.db is not None, "service not started"
        if self._outbox is None or self._outbox.pool is not self.db.stream_pool:
            self._outbox = Outbox(self.db.stream_pool, retry_s=self.settings.steward_outbox_retry_s)
            self._outbox.on_fenced = self._fenced
        return self._outbox

    def runner(self) -> AgentRunner:
        """The runner of one prompt: the router once the fairies exist, else the one-shot."""
        one_shot = self._one_shot()
        if self.fairies is None:
            return one_shot
        if isinstance(one_shot, OneShotRunner):
            one_shot.use(self.fairies)  # its one-shotting fairies: one runtime, durable
        return PromptRouter(self.fairies, one_shot, names=self.fairies.names_of)

    def _deps(self) -> RoomDeps:
        return RoomDeps(
            settings=self.settings,
            outbox=self.outbox,
            runner=self.runner,
            fairies=self.fairies,
            grant_bindings=GrantBindings(self.db.pool) if self.db is not None else None,
            conversation=ConversationRepo(self.db.pool) if self.db is not None else None,
            crew_store=CrewStore(self.db.pool) if self.db is not None else None,
            crew=self.fairies.room_crew if self.fairies is not None else None,
            project_runs=ProjectRuns(self.db.pool) if self.db is not None else None,
            projects=self.fairies.steering if self.fairies is not None else None,
            usage_of=self.usage.session_summary,
            speech=speech_engine(self.settings),
            holds_lease=self._holds_lease,
        )

    async def _holds_lease(self, room_id: str) -> bool:
        return self.leases is not None and await self.leases.confirm(room_id)

    def _fenced(self, room_id: str, token: int) -> None:
        if self.leases is not None:
            self.leases.refused(room_id, token)

    def _room_sessions(self, room_id: str) -> RoomSessions | None:
        """The registry of a room this process serves (where the fairies' runs open)."""
        runtime = self.rooms.get(room_id)
        return None if runtime is None or runtime.closed.is_set() else runtime.sessions

    def _fairy_presence(self, room_id: str) -> Publish:
        async def publish(msg: FairiesMessage) -> None:
            runtime = self.rooms.get(room_id)
            if runtime is not None and not runtime.closed.is_set():
                await runtime.standing.fairies(msg)

        return publish

    def _project_states(self, room_id: str) -> PublishProject:
        async def publish(state: ProjectState) -> None:
            runtime = self.rooms.get(room_id)
            if runtime is not None and not runtime.closed.is_set():
                await runtime.standing.publish(state)

        return publish

    async def start(self, *, http: bool = True) -> StewardService:
        ffi_router.require_sdk_internals()  # before any room relies on them
        ffi_router.set_native_log_capture(self.settings.steward_native_log_capture)
        watch_gc_pauses()
        if self.db is None:
            self.db = await open_database(self.settings, max_size=self._pool_size)
        if self._use_fairies and self.fairies is None:
            self.fairies = FairyRuntime(
                store=FairyStore(self.db.pool),
                sessions=SessionsByRoom(self._room_sessions),
                models=models_from_settings(self.settings),
                publish=self._fairy_presence,
                crew_store=CrewStore(self.db.pool),
                project_runs=ProjectRuns(self.db.pool),
                publish_project=self._project_states,
                budget=RoomBudget(self.usage, self.settings.steward_room_daily_budget_usd),
            )
        if self.leases is None:
            liveness = process_liveness()
            if liveness is None:
                self._liveness = liveness = await Liveness(self.db.url).start()
            ttl = self.settings.steward_lease_seconds
            leases = RoomLeases(self.db.pool, self.owner, ttl_s=ttl, owner_key=liveness.key)
            self.leases = LeaseKeeper(leases, on_lost=self._lease_lost, liveness=liveness)
            self.leases.start()
        if self._bell is None:
            self._bell = RunBell(QueuedRuns(self.db.pool), self.settings.steward_queue_poll_seconds)
            self._bell_task = asyncio.create_task(self._bell.run(), name="queued-runs")
        if http:
            await self.start_http()
        return self

    async def claim(self, room_name: str, *, wait_s: float = 0.0) -> Lease:
        """The room's lease, waiting up to `wait_s` for another steward's to lapse (a killed
        steward's room is free once its lease expires); raises `LeaseHeld`."""
        assert self.leases is not None, "service not started"
        if self.draining:
            raise Draining(f"the steward is shutting down; room {room_name!r} not taken")
        deadline = asyncio.get_running_loop().time() + wait_s
        while True:
            try:
                return await self.leases.claim(room_name)
            except LeaseHeld:
                if asyncio.get_running_loop().time() >= deadline:
                    raise
            await asyncio.sleep(min(0.5, self.settings.steward_lease_seconds / 4))

    def _lease_lost(self, room_id: str) -> None:
        """Another steward has the room now: stop serving it (appends are fenced already)."""
        runtime = self.rooms.get(room_id)
        if runtime is None or runtime.closed.is_set():
            return
        log.warning("room_given_up", room=room_id, reason="lease lost")
        self._lost.spawn(asyncio.create_task(self.leave(room_id), name=f"give-up:{room_id}"))

    async def start_http(self) -> int:
        app = create_app(self)
        self._http = web.AppRunner(app, access_log=None)
        await self._http.setup()
        site = web.TCPSite(
            self._http, self.settings.steward_http_host, self.settings.steward_http_port
        )
        await site.start()
        addresses = self._http.addresses  # the bound sockets' addresses: port 0 resolved
        self.http_port = int(addresses[0][1]) if addresses else None
        log.info("http_listening", host=self.settings.steward_http_host, port=self.http_port)
        return self.http_port or 0

    async def join(self, room_name: str) -> RoomRuntime:
        """Direct mode: connect to `room_name` with the steward's own token."""
        async with self._lock:
            if room_name in self.rooms and not self.rooms[room_name].closed.is_set():
                return self.rooms[room_name]
            # Before connecting: one identity per room, so a second steward would evict the first.
            wait_s = self.settings.steward_lease_seconds + 1.0
            lease = await self.claim(room_name, wait_s=wait_s)
            try:
                runtime = await connect_direct(
                    self.settings, room_name, self._deps(), fence=lease.token
                )
            except BaseException:
                await self._release(room_name)
                raise
            self._track(runtime)
        await self._resume_fairies(runtime)
        return runtime

    async def attach(self, room: rtc.Room, room_name: str | None = None) -> RoomRuntime:
        """Worker mode: a room the livekit-agents worker connected for us."""
        name = room_name or room.name
        lease = await self.claim(name)  # normally claimed before the worker connected
        try:
            runtime = await RoomRuntime(room, name, self._deps(), fence=lease.token).start()
        except BaseException:
            await self._release(name)
            raise
        self._track(runtime)
        await self._resume_fairies(runtime)
        return runtime

    async def _resume_fairies(self, runtime: RoomRuntime) -> None:
        """A project another (dead) steward left unfinished continues here."""
        if self.fairies is None:
            return
        try:
            await self.fairies.resume(runtime.room_id)
        except Exception:
            log.exception("fairies_resume_failed", room=runtime.room_id)

    def _track(self, runtime: RoomRuntime) -> None:
        self.rooms[runtime.room_id] = runtime
        self._pickups[runtime.room_id] = asyncio.create_task(
            self._take_queued(runtime), name=f"queued-runs:{runtime.room_id}"
        )

    async def _take_queued(self, runtime: RoomRuntime) -> None:
        """Run the HTTP runs queued for this room, oldest first and one at a time, each
        under the session id its caller was given; only while our lease holds the room."""
        assert self.db is not None and self.leases is not None and self._bell is not None
        runs, room = QueuedRuns(self.db.pool), runtime.room_id
        bell = self._bell.register(room)
        while not runtime.closed.is_set() and not self.draining:
            lease = self.leases.held.get(room)
            if lease is None:
                return
            run: QueuedRun | None = None
            try:
                run = await runs.take(room, owner=self.owner, token=lease.token)
            except Exception as err:  # Postgres away: try again next beat
                log.warning("queued_run_take_failed", room=room, error=str(err))
            if run is None:  # sleeps until the bell finds a run for the room, or it closes
                bell.clear()
                rung = asyncio.ensure_future(bell.wait())
                closed = asyncio.ensure_future(runtime.closed.wait())
                try:
                    await asyncio.wait([rung, closed], return_when=asyncio.FIRST_COMPLETED)
                finally:
                    rung.cancel()
                    closed.cancel()
                continue
            prompt = PromptInput(
                message=run.prompt,
                source="http",
                requester=queued_owner(run.asker),
                bounds=run.viewport,
                model=run.model,
                fairies=run.fairies,
            )
            if self.draining:  # taken as the drain began: the next steward takes it again
                log.info("queued_run_left", room=room, session_id=run.session_id)
                return
            log.info("queued_run_taken", room=room, session_id=run.session_id, token=lease.token)
            try:
                await runtime.run_prompt(prompt, run.session_id)
            except Exception:  # never started: taken again once this lease is gone
                log.exception("queued_run_start_failed", room=room, session_id=run.session_id)
                continue
            with contextlib.suppress(Exception):  # its outcome is logged and stored by then
                await runtime.sessions.wait(run.session_id)

    async def leave(self, room_name: str) -> None:
        pickup = self._pickups.pop(room_name, None)
        if self._bell is not None:
            self._bell.unregister(room_name)
        if pickup is not None:
            pickup.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await pickup
        runtime = self.rooms.pop(room_name, None)
        if runtime is not None:
            await runtime.close()
        await self._release(room_name)

    async def _release(self, room_name: str) -> None:
        if self.leases is not None:
            await self.leases.release(room_name)

    # --- API backend ---------------------------------------------------------------------
    def _check_model(self, model: str | None) -> None:
        """A caller picks only a listed model; never `replay:` (it reads a local file) nor
        anything path-like, whatever the list says. One answer for all, telling nothing."""
        if model is None:
            return
        path_like = model.startswith("replay:") or "/" in model or "\\" in model
        if path_like or model not in self.settings.models_allowed():
            log.warning("model_refused", model=model[:128])
            raise RunRefused(400, "model not allowed (see STEWARD_MODELS_ALLOWED)")

    async def run_http(
        self,
        room_id: str,
        message: str,
        model: str | None,
        viewport: Box | None,
        fairies: tuple[str, ...] = (),
    ) -> RunAccepted:
        """Run it here if this process serves the room; else queue it for the room's steward."""
        self._check_model(model)
        runtime = self.rooms.get(room_id)
        if runtime is not None and not runtime.closed.is_set():
            prompt = PromptInput(
                message=message,
                source="http",
                requester=HTTP_OWNER,
                bounds=viewport,
                model=model,
                fairies=fairies,
            )
            return RunAccepted(await runtime.run_prompt(prompt), "running")
        run = QueuedRun(
            new_session_id(), room_id, message, model, viewport, asker=HTTP_OWNER, fairies=fairies
        )
        await self._queue(run)
        return RunAccepted(run.session_id, "queued")

    async def retire_dispatches(self, room_id: str, *, keep: str) -> None:
        """The room is served through dispatch `keep`: LiveKit forgets the ones before it."""
        if self._livekit_admin is None:
            self._livekit_admin = LiveKitAdmin.from_settings(self.settings)
        try:
            await self._livekit_admin.retire(room_id, keep=keep)
        except Exception as err:  # a leftover listing harms nobody: the room stays served
            log.warning("agent_dispatch_retire_failed", room=room_id, error=str(err))

    async def _queue(self, run: QueuedRun) -> None:
        """Keep the run in Postgres; if no steward holds the room's lease, ask LiveKit to
        send the room to a worker (a steward that serves it takes the run within a poll)."""
        assert self.db is not None and self.leases is not None, "service not started"
        runs = QueuedRuns(self.db.pool)
        await runs.put(run, ttl_s=self.settings.steward_queued_run_seconds)
        held = await self.leases.leases.get(run.room_id)
        served = held is not None and not held.expired
        if not served:
            if self._livekit_admin is None:
                self._livekit_admin = LiveKitAdmin.from_settings(self.settings)
            try:
                await self._livekit_admin.dispatch(run.room_id, reason="http_run")
            except Exception as err:
                await runs.drop(run.session_id)
                log.warning("http_run_dispatch_failed", room=run.room_id, error=str(err))
                raise RunRefused(
                    502, "agent dispatch failed: no steward asked to take the room"
                ) from err
        with contextlib.suppress(Exception):  # readers compute `expired` themselves
            await runs.expire()
        try:  # where the table grows: each run queued forgets a bounded batch of old ones
            await runs.prune(retention_s=self.settings.steward_queued_run_retention_seconds)
        except Exception as err:
            log.warning("queued_runs_prune_failed", error=str(err))
        log.info(
            "http_run_queued", room=run.room_id, session_id=run.session_id, dispatched=not served
        )

    async def run_state(self, session_id: str) -> dict[str, Any] | None:
        assert self.db is not None, "service not started"
        found = await QueuedRuns(self.db.pool).state(session_id)
        if found is None:
            return None
        return {
            "session": found.session_id,
            "roomId": found.room_id,
            "status": found.state,
            "outcome": found.outcome,
            "createdAt": found.created_at.isoformat(),
            "takenAt": found.taken_at.isoformat() if found.taken_at else None,
        }

    async def dev_token(self, room_id: str, identity: str) -> dict[str, str]:
        if identity == self.settings.steward_identity:
            raise RunRefused(400, "that identity is the steward's")
        try:
            await self.join(room_id)
        except Exception as err:
            log.exception("dev_join_failed", room=room_id)
            raise RunRefused(502, f"could not join room {room_id!r}: {err}") from err
        token = mint_token(
            self.settings.livekit_api_key,
            self.settings.livekit_api_secret.get_secret_value(),
            room=room_id,
            identity=identity,
            grant_key=self.settings.grant_keys()[0],
        )
        return {"token": token, "url": self.settings.livekit_url}

    async def readiness(self) -> dict[str, Any]:
        db_ok = False
        if self.db is not None:
            with contextlib.suppress(Exception):
                db_ok = await asyncio.wait_for(self.db.pool.fetchval("SELECT 1"), 2) == 1
        return {"db": db_ok, "ready": db_ok}

    async def rooms_overview(self, room_id: str | None) -> list[dict[str, Any]]:
        """What each served room (or the one asked for) is doing now (`GET /api/rooms`)."""
        budget = self.settings.steward_room_daily_budget_usd
        out: list[dict[str, Any]] = []
        for rid, runtime in sorted(self.rooms.items()):
            if runtime.closed.is_set() or (room_id is not None and rid != room_id):
                continue
            view = runtime.overview()
            spent: float | None = None
            if self.db is not None:
                with contextlib.suppress(Exception):
                    spent = await UsageRepo(self.db.pool).spent_today(rid)
            view["spent_today_usd"] = spent
            view["budget_left_usd"] = None if spent is None else round(max(0.0, budget - spent), 6)
            out.append(view)
        return out

    async def drain(self, timeout_s: float) -> None:
        """SIGTERM: take no more rooms, let running prompted sessions finish for up to
        `timeout_s` (fairy work resumes elsewhere from Postgres), then close, which releases
        the leases so another steward takes the rooms at once."""
        self.draining = True
        # ensure_future: cancelling a wait below stops only the wait, never the session.
        waits = [
            asyncio.ensure_future(runtime.sessions.settled(sid))
            for runtime in self.rooms.values()
            if not runtime.closed.is_set()
            for sid in runtime.sessions.running()
        ]
        log.info("drain_started", rooms=len(self.rooms), sessions=len(waits), timeout_s=timeout_s)
        pending: set[asyncio.Future[Any]] = set()
        if waits:
            _, pending = await asyncio.wait(waits, timeout=timeout_s)
            for wait in pending:
                wait.cancel()
        log.info("drain_finished", unfinished=len(pending))
        await self.close()

    async def close(self) -> None:
        # Each step bounded: one stuck room, peer or pool must not keep the rest open.
        if self.fairies is not None:
            # Their open requests stay in Postgres for a resume.
            await close_within(self.fairies.close(), "fairies")
        for name in list(self.rooms):
            await close_within(self.leave(name), "room", timeout_s=60.0, room=name)
        await close_within(self._lost.wait(), "rooms_given_up")
        if self._bell_task is not None:
            self._bell_task.cancel()
            await close_within(asyncio.gather(self._bell_task, return_exceptions=True), "bell")
            self._bell, self._bell_task = None, None
        if self.leases is not None:
            await close_within(self.leases.close(), "leases")
            self.leases = None
        if self._liveness is not None:
            await close_within(self._liveness.close(), "liveness")
            self._liveness = None
        if self._http is not None:
            await close_within(self._http.cleanup(), "http")
            self._http = None
        if self._livekit_admin is not None:
            await close_within(self._livekit_admin.aclose(), "agent_dispatch")
            self._livekit_admin = None
        self._outbox = None
        if self._own_db and self.db is not None:
            await close_within(self.db.close(), "database")
            self.db = None
