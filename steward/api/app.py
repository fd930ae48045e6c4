"""The HTTP API: `POST /api/canvas-agent/run`, `GET /api/canvas-agent/run/{session}`,
`GET /api/rooms[/{room}]`, `/healthz`, `/metrics`.

Everything under /api needs `Authorization: Bearer $STEWARD_API_KEY`; `/healthz` says only
whether the process is live and ready, so it may stay open to load balancers."""

from __future__ import annotations

import hmac
import logging
import re
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic.alias_generators import to_camel

from steward.config import Settings
from steward.obs import metrics
from steward.obs.logging import get_logger
from steward.protocol.box import Box, bounded_box
from steward.protocol.limits import MAX_FAIRIES_PER_ROOM, MAX_ID_CHARS, MAX_PROMPT_CHARS
from steward.protocol.messages import FairyId

log = get_logger(__name__)

# A body of up to this many bytes is read; one byte more is refused (413).
MAX_BODY_BYTES = 64 * 1024
RUN_PATH = "/api/canvas-agent/run"
ROOMS_PATH = "/api/rooms"


class RunRefused(Exception):
    """An HTTP run that cannot start: the status code and reason the client gets back."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


# Control characters (NUL above all: Postgres text cannot hold it) and lone surrogates (no
# UTF-8 encoding) have no place in an id or a prompt.
_UNSTORABLE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")
_BAD_ID = re.compile(r"[\x00-\x1f\x7f\ud800-\udfff]")


def _id_problem(value: str) -> str | None:
    if len(value) > MAX_ID_CHARS:
        return f"over {MAX_ID_CHARS} characters"
    if _BAD_ID.search(value):
        return "control characters and unpaired surrogates are not allowed"
    return None


def _plain_id(value: str) -> str:
    problem = _id_problem(value)
    if problem is not None:
        raise ValueError(problem)
    return value


def _storable_text(value: str) -> str:
    if _UNSTORABLE.search(value):
        raise ValueError(
            "NUL, other control characters but tab and newline, and unpaired"
            " surrogates are not allowed"
        )
    return value


class RunRequest(BaseModel):
    """The body of `POST /api/canvas-agent/run`: room, prompt, model, viewport and fairies."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    room_id: str = Field(min_length=1, max_length=MAX_ID_CHARS)
    message: str = Field(min_length=1, max_length=MAX_PROMPT_CHARS)
    model: str | None = Field(default=None, max_length=128)
    viewport: Box | None = None
    # The fairies the run is for, in the order picked (`PromptRequest.fairies`).
    fairies: list[FairyId] | None = Field(
        default=None, min_length=1, max_length=MAX_FAIRIES_PER_ROOM
    )

    _room_id = field_validator("room_id")(_plain_id)
    _viewport = field_validator("viewport")(bounded_box)
    _texts = field_validator("message", "model")(_storable_text)


@dataclass(frozen=True)
class RunAccepted:
    """A run started here (`running`) or kept in Postgres for the room's steward (`queued`)."""

    session_id: str
    status: Literal["running", "queued"]


class Backend(Protocol):
    """What the HTTP API needs of the service: start a run, read a run's status, list rooms, say
    whether it is ready, and mint a development token."""

    settings: Settings

    async def run_http(
        self,
        room_id: str,
        message: str,
        model: str | None,
        viewport: Box | None,
        fairies: tuple[str, ...] = (),
    ) -> RunAccepted: ...

    async def run_state(self, session_id: str) -> dict[str, Any] | None: ...

    async def readiness(self) -> dict[str, Any]: ...

    async def rooms_overview(self, room_id: str | None) -> list[dict[str, Any]]: ...

    async def dev_token(self, room_id: str, identity: str) -> dict[str, str]: ...


BACKEND: web.AppKey[Backend] = web.AppKey("backend")


def _error(status: int, reason: str) -> web.Response:
    return web.json_response({"error": reason}, status=status)


def _route(request: web.Request) -> str:
    """The route template (`/api/rooms/{room}`), never the path a caller chose: a metric
    label per path would grow /metrics with every request."""
    resource = request.match_info.route.resource
    return resource.canonical if resource is not None else "unmatched"


def _rejected(request: web.Request, status: int, reason: str, message: str) -> web.Response:
    """A refused API request: counted, logged with its reason, answered with the message."""
    metrics.REJECTED_INBOUND.labels(topic=_route(request), reason=reason).inc()
    log.warning(
        "http_rejected",
        path=request.path[:200],
        route=_route(request),
        peer=request.remote,
        reason=reason,
        status=status,
    )
    return _error(status, message)


def _bytes(text: str) -> bytes:
    # Header values may hold any code point (even lone surrogates): encode, never raise.
    return text.encode("utf-8", "surrogatepass")


def _authorized(request: web.Request, key: str) -> bool:
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    same = hmac.compare_digest(_bytes(token.strip()), _bytes(key))
    return scheme.lower() == "bearer" and same


def _auth_refusal(request: web.Request) -> web.Response | None:
    """None when the request carries the API key; else the response refusing it."""
    secret = request.app[BACKEND].settings.steward_api_key
    if secret is None or not secret.get_secret_value():
        return _error(503, "the API is disabled: set STEWARD_API_KEY")
    if not _authorized(request, secret.get_secret_value()):
        return _rejected(
            request, 401, "unauthorized", "missing or wrong API key (Authorization: Bearer <key>)"
        )
    return None


async def run(request: web.Request) -> web.Response:
    backend = request.app[BACKEND]
    refusal = _auth_refusal(request)
    if refusal is not None:
        return refusal
    try:
        # aiohttp refuses a body over `client_max_size` itself; answer it like our own 413.
        body = await request.read()
    except web.HTTPRequestEntityTooLarge:
        body = b"x" * (MAX_BODY_BYTES + 1)
    if len(body) > MAX_BODY_BYTES:
        return _rejected(request, 413, "oversize", f"body over {MAX_BODY_BYTES} bytes (the limit)")
    try:
        req = RunRequest.model_validate_json(body)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "<body>"
        return _rejected(request, 400, "schema", f"invalid request: {where}: {first['msg']}")
    try:
        accepted = await backend.run_http(
            req.room_id, req.message, req.model, req.viewport, tuple(req.fairies or ())
        )
    except RunRefused as err:
        return _rejected(request, err.status, f"refused_{err.status}", err.reason)
    sid = accepted.session_id
    log.info(
        "http_run", room=req.room_id, session_id=sid, status=accepted.status, prompt=req.message
    )
    # `sessionId`/`roomId` as before; `session` is the id the room's browsers will see.
    answer = {"status": accepted.status, "session": sid, "sessionId": sid, "roomId": req.room_id}
    return web.json_response(answer, status=202)


async def run_state(request: web.Request) -> web.Response:
    """Where a run is: queued, expired (no steward took its room in time), or its session's
    status (running, done, canceled, error)."""
    refusal = _auth_refusal(request)
    if refusal is not None:
        return refusal
    session_id = request.match_info["session"]
    problem = _id_problem(session_id)
    if problem is not None:
        return _rejected(request, 400, "schema", f"session id: {problem}")
    found = await request.app[BACKEND].run_state(session_id)
    if found is None:
        return _error(404, f"no run with session id {session_id!r}")
    return web.json_response(found)


async def healthz(request: web.Request) -> web.Response:
    """Live and ready only: room names, counts and identities are behind the API key."""
    ready = bool((await request.app[BACKEND].readiness()).get("ready"))
    return web.json_response({"live": True, "ready": ready}, status=200 if ready else 503)


async def rooms(request: web.Request) -> web.Response:
    refusal = _auth_refusal(request)
    if refusal is not None:
        return refusal
    return web.json_response({"rooms": await request.app[BACKEND].rooms_overview(None)})


async def room(request: web.Request) -> web.Response:
    refusal = _auth_refusal(request)
    if refusal is not None:
        return refusal
    room_id = request.match_info["room"]
    problem = _id_problem(room_id)
    if problem is not None:
        return _rejected(request, 400, "schema", f"room id: {problem}")
    found = await request.app[BACKEND].rooms_overview(room_id)
    if not found:
        return _error(404, f"this steward does not serve room {room_id[:MAX_ID_CHARS]!r}")
    return web.json_response(found[0])


async def metrics_view(request: web.Request) -> web.Response:
    resp = web.Response(body=generate_latest())
    resp.content_type = CONTENT_TYPE_LATEST.split(";")[0]
    return resp


_DEV_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


async def dev_token(request: web.Request) -> web.Response:
    """Dev only: a token for `room` as `identity`, with a prompt grant; joins the room."""
    room, identity = request.query.get("room", ""), request.query.get("identity", "")
    if not _DEV_NAME.match(room) or not _DEV_NAME.match(identity):
        return _error(400, "room and identity: 1-64 letters, digits, '_', '.', '-'")
    try:
        return web.json_response(await request.app[BACKEND].dev_token(room, identity))
    except RunRefused as err:
        return _error(err.status, err.reason)


class _RefusedRequestsQuietly(logging.Filter):
    """aiohttp logs a request its own parser refused (a header line over its limit, a
    malformed request line) with a traceback, then answers it 4xx. That is the client's
    error, not ours: one `http_rejected` line with the status and the kind of fault instead
    (the class, not the message: it quotes the header, which may hold a key)."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if not (isinstance(exc, HttpProcessingError) and 400 <= exc.code < 500):
            return True
        reason = type(exc).__name__
        metrics.REJECTED_INBOUND.labels(topic="unparsed", reason=reason).inc()
        peer = record.args[0] if isinstance(record.args, tuple) and record.args else None
        log.warning("http_rejected", peer=peer, reason=reason, status=exc.code)
        return False


def _quiet_parser_refusals() -> None:
    server = logging.getLogger("aiohttp.server")
    if not any(isinstance(f, _RefusedRequestsQuietly) for f in server.filters):
        server.addFilter(_RefusedRequestsQuietly())


def create_app(backend: Backend) -> web.Application:
    _quiet_parser_refusals()
    # aiohttp refuses a body over `client_max_size` bytes, as we do.
    app = web.Application(client_max_size=MAX_BODY_BYTES)
    app[BACKEND] = backend
    app.router.add_post(RUN_PATH, run)
    app.router.add_get(RUN_PATH + "/{session}", run_state)
    app.router.add_get(ROOMS_PATH, rooms)
    app.router.add_get(ROOMS_PATH + "/{room}", room)
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/metrics", metrics_view)
    settings = backend.settings
    if settings.steward_dev_tokens:
        app.router.add_get("/api/dev/token", dev_token)
    demo = settings.steward_demo_dir
    if demo is not None and (demo / "index.html").exists():
        index = demo / "index.html"

        async def index_view(_request: web.Request) -> web.FileResponse:
            return web.FileResponse(index)

        app.router.add_get("/", index_view)
        app.router.add_static("/", demo)
    return app
