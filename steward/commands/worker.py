"""`steward worker`: production mode, a livekit-agents worker with explicit dispatch.

LiveKit dispatches rooms to workers registered under `STEWARD_AGENT_NAME` (explicit dispatch:
a token's agent dispatch or the AgentDispatch API). Each job connects its room and hands the
connected `rtc.Room` to the same code path as `steward join` (`StewardService.attach`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import math
import signal
import threading
from collections.abc import Awaitable, Callable
from typing import Any

from steward.access import reissue_token
from steward.commands.setup import setup
from steward.config import MODEL_ROLES, Settings, get_settings
from steward.model.registry import preload
from steward.obs import stack_dump
from steward.obs.logging import get_logger
from steward.protocol.names import ATTR_ROLE
from steward.room.connect import room_options
from steward.room.workers.failover import FailoverWatcher
from steward.room.workers.livekit_admin import LiveKitAdmin
from steward.room.workers.worker_capacity import WorkerCapacity
from steward.service import Draining, StewardService
from steward.store.database import DEFAULT_POOL_SIZE, Database, open_database
from steward.store.leases import LeaseHeld, RoomLeases, worker_id
from steward.store.liveness import Liveness, set_process_liveness
from steward.store.queued_runs import QueuedRuns
from steward.voice.engines import speech_engine

log = get_logger(__name__)

# Set on SIGTERM; every job (a thread with its own loop) drains its room when it sees it.
_DRAINING = threading.Event()


def job_acceptor(capacity: WorkerCapacity) -> Callable[[Any], Awaitable[None]]:
    """Take a job while a slot is free, joining under the steward's fixed identity (browsers
    address it by name) as its role; a full worker lets LiveKit offer it to another."""

    async def accept_job(req: Any) -> None:
        if not capacity.take(req.id):
            log.info("worker_job_declined", room=req.room.name, max_rooms=capacity.max_rooms)
            await req.reject(terminate=False)
            return
        settings = get_settings()
        await req.accept(
            identity=settings.steward_identity,
            name="Canvas Steward",
            attributes={ATTR_ROLE: "steward"},
        )

    return accept_job


def room_service(settings: Settings) -> StewardService:
    """One service per job (each job has its own event loop), with pools sized for one room."""
    return StewardService(settings, pool_size=settings.steward_worker_room_pool_size)


# Connections per pool of the re-dispatch watcher (it opens two, as every database does).
WATCHER_POOL_SIZE = 2


def db_connections_needed(settings: Settings, *, http: bool = False) -> int:
    """Postgres connections a full worker may hold: two pools per room, the watcher's two
    pools, the liveness connection, and with `--http` the API service's two pools."""
    rooms = 2 * settings.steward_worker_room_pool_size * settings.steward_worker_max_rooms
    api = 2 * DEFAULT_POOL_SIZE if http else 0
    return rooms + 2 * WATCHER_POOL_SIZE + 1 + api


async def entrypoint(ctx: Any) -> None:
    """A plain job entrypoint (no AgentSession): the steward is a data-only participant."""
    settings = setup(get_settings())
    service = room_service(settings)
    await service.start(http=False)
    try:
        # The lease before the connection: joining would evict a steward still serving it.
        try:
            await service.claim(ctx.job.room.name)
        except (LeaseHeld, Draining) as err:
            log.warning("worker_job_refused", room=ctx.job.room.name, error=str(err))
            ctx.shutdown(reason="room not taken")
            return
        # `JobContext.connect` takes no room options, and the stream payload cap is one: the
        # job's room joins as the job's own participant (its token's claims, signed with our
        # key) with our options; auto-subscribe off, the steward asks for microphones itself.
        token = reissue_token(
            ctx.token_claims(),
            settings.livekit_api_key,
            settings.livekit_api_secret.get_secret_value(),
        )
        await ctx.room.connect(settings.livekit_url, token, room_options(auto_subscribe=False))
        runtime = await service.attach(ctx.room)
        log.info("worker_job_started", room=runtime.room_id, job=ctx.job.id)
        if ctx.job.dispatch_id:  # a dead worker's dispatch stays listed as active otherwise
            await service.retire_dispatches(runtime.room_id, keep=ctx.job.dispatch_id)
        while not runtime.closed.is_set() and not _DRAINING.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(runtime.closed.wait(), 0.2)
    finally:
        if _DRAINING.is_set():
            await service.drain(settings.steward_drain_seconds)
        else:
            await service.close()
        ctx.shutdown(reason="room served")


class _OwnConnectNotice(logging.Filter):
    """livekit-agents warns about every job that never called `JobContext.connect`; ours
    connect the job's room themselves (see `entrypoint`), so the warning is always false."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("The room connection was not established")


async def _worker(args: argparse.Namespace) -> int:
    from livekit import agents

    settings = setup()
    # `kill -USR1 <pid>` (safe) or `-USR2` (last resort): every thread's stack to stderr, so a
    # worker that stopped logging can still say where it is.
    stack_dump.install()
    # Operators need the worker's lifecycle (registered, job received, capacity) in the logs.
    agents_log = logging.getLogger("livekit.agents")
    agents_log.setLevel(logging.INFO)
    agents_log.addFilter(_OwnConnectNotice())
    server: Any = None
    capacity = WorkerCapacity(
        settings.steward_worker_max_rooms,
        lambda: {j.job.id for j in server.active_jobs} if server is not None else set(),
    )
    options = agents.WorkerOptions(
        entrypoint_fnc=entrypoint,
        request_fnc=job_acceptor(capacity),
        # The steward is I/O-bound: machine CPU load is a poor signal (the default marks the
        # worker full on a busy 2-core box), so load is the share of room slots in use, and
        # the slots are counted by `capacity` (livekit-agents' own check: worker_capacity.py).
        load_fnc=lambda _server: capacity.load(),
        load_threshold=math.inf,
        num_idle_processes=settings.steward_worker_idle_processes,
        # Jobs share the worker process (each with its own event loop and service): a room is
        # I/O-bound, and spawning a Python process per room costs seconds on small machines.
        job_executor_type=agents.JobExecutorType.THREAD,
        agent_name=settings.steward_agent_name,
        ws_url=settings.livekit_url,
        api_key=settings.livekit_api_key,
        api_secret=settings.livekit_api_secret.get_secret_value(),
        host=args.host,
        port=args.port,
    )
    server = agents.AgentServer.from_server_options(options)
    log.info("worker_starting", agent_name=settings.steward_agent_name, url=settings.livekit_url)
    preload(settings.model_for_role(role) for role in MODEL_ROLES)
    # Built here, once, so jobs starting together never create onnxruntime sessions at once
    # (that wedged a worker); a bad STEWARD_STT stops the worker now, not each job.
    speech_engine(settings)
    watcher = await _start_watcher(settings, http=args.http)
    # `--http`: the HTTP API in the worker's own process, serving no room itself: a run for
    # any room is queued in Postgres for the room's steward (dispatched if it has none).
    api = await StewardService(settings, fairies=False).start() if args.http else None
    running = asyncio.create_task(server.run(devmode=args.dev), name="agent-server")
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, _DRAINING.set)
    try:
        while not running.done() and not _DRAINING.is_set():
            await asyncio.wait([running], timeout=0.2)
        if _DRAINING.is_set() and not running.done():
            await _drain(server, settings.steward_drain_seconds)
    finally:
        if api is not None:
            await api.close()
        await watcher.close()
        await server.aclose()
        with contextlib.suppress(asyncio.CancelledError):
            await running
    return 0


class _Watcher:
    """The re-dispatch watcher with its own small pool (jobs have theirs, in their threads),
    and the process's liveness lock, which every job stores in its leases."""

    def __init__(self, db: Database, failover: FailoverWatcher, liveness: Liveness) -> None:
        self.db, self.failover, self.liveness = db, failover, liveness

    async def close(self) -> None:
        await self.failover.close()
        set_process_liveness(None)
        await self.liveness.close()
        await self.db.close()


async def _start_watcher(settings: Settings, *, http: bool) -> _Watcher:
    db = await open_database(settings, max_size=WATCHER_POOL_SIZE)
    # Held before any job takes a lease: a lease whose key is not locked reads as lapsed.
    liveness = await Liveness(db.url).start()
    set_process_liveness(liveness)
    leases = RoomLeases(db.pool, worker_id(), ttl_s=settings.steward_lease_seconds)
    failover = FailoverWatcher(
        leases,
        LiveKitAdmin.from_settings(settings),
        steward_identity=settings.steward_identity,
        runs=QueuedRuns(db.pool),
    )
    failover.start()
    # Each room has pools of its own (asyncpg pools belong to one event loop): say when a
    # full worker could ask Postgres for more connections than it allows at all.
    needed = db_connections_needed(settings, http=http)
    allowed = int(await db.pool.fetchval("SHOW max_connections"))
    report = log.warning if needed > allowed else log.info
    report("worker_db_budget", connections_needed=needed, server_max_connections=allowed)
    return _Watcher(db, failover, liveness)


async def _drain(server: Any, drain_s: float) -> None:
    """SIGTERM: LiveKit sends no new jobs; each job finishes its sessions within `drain_s`
    and releases its room's lease; then the worker exits."""
    log.info("worker_draining", timeout_s=drain_s)
    try:
        # A margin over the jobs' own bound: they close their rooms after it.
        await server.drain(timeout=int(drain_s) + 10)
    except TimeoutError:
        log.warning("worker_drain_timed_out", timeout_s=drain_s)
    log.info("worker_drained")


def _run(args: argparse.Namespace) -> int:
    with contextlib.suppress(KeyboardInterrupt):
        return asyncio.run(_worker(args))
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser(
        "worker", help="production: register with LiveKit agent dispatch (livekit-agents)"
    )
    p.add_argument("--host", default="127.0.0.1", help="worker health server host")
    p.add_argument("--port", type=int, default=0, help="worker health server port (0: any)")
    p.add_argument("--dev", action="store_true", help="livekit-agents dev mode")
    p.add_argument("--http", action="store_true", help="serve the HTTP API too (STEWARD_HTTP_PORT)")
    p.set_defaults(handler=_run)
