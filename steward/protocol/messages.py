"""Every wire message of protocol version 1, as pydantic models.

Field names are snake_case in Python and camelCase on the wire (aliases), so the browser
side reads natural TypeScript.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, field_validator
from pydantic.alias_generators import to_camel

from steward.protocol.box import Box, bounded_box
from steward.protocol.limits import (
    MAX_ACTIONS_PER_ENVELOPE,
    MAX_EDIT_RECORDS,
    MAX_ENVELOPES_PER_BATCH,
    MAX_FAIRIES_PER_ROOM,
    MAX_FAIRY_NAME_CHARS,
    MAX_ID_CHARS,
    MAX_PERSONALITY_CHARS,
    MAX_PLAN_CHARS,
    MAX_PROJECT_TASKS,
    MAX_PROMPT_CHARS,
    MAX_SCREENSHOT_BYTES,
    MAX_TITLE_CHARS,
    MIN_SCREENSHOT_MAX_BYTES,
)
from steward.protocol.names import PROTOCOL_VERSION

Id = Field(min_length=1, max_length=MAX_ID_CHARS)
FairyId = Annotated[str, Field(min_length=1, max_length=MAX_ID_CHARS)]

# What the steward sends browsers to apply. Layout (move, align, ...) is worked out on the
# steward's mirror and sent as `update_shape` records (`steward.canvas.apply.LayoutVerb`).
WireVerb = Literal[
    "create_shape",
    "update_shape",
    "delete_shape",
    "reorder",
    "set_viewport",
    "think",
    "todo",
    "add_detail",
]
WIRE_VERBS: tuple[str, ...] = WireVerb.__args__  # type: ignore[attr-defined]

SessionStatus = Literal[
    "waiting_context", "calling_model", "streaming", "scheduled", "done", "canceled", "error"
]
# A session's last status is one of these (it carries the session's last seq).
FINAL_STATUSES: frozenset[str] = frozenset({"done", "canceled", "error"})
ContextPart = Literal["screenshot", "shapes", "viewport", "selection", "user_changes"]


_DEFAULT_WANT: tuple[ContextPart, ...] = ("screenshot", "shapes")


def finite_json(value: Any) -> Any:
    """Refuse NaN/Infinity anywhere in free-form JSON: encoders turn them into null, so the
    steward's mirror and the browsers would disagree. Iterative, so depth cannot overflow."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, float) and not math.isfinite(v):
            raise ValueError("NaN and Infinity are not allowed")
        if isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return value


class WireModel(BaseModel):
    """The base of every wire message: camelCase on the wire, no unknown fields, finite numbers
    only."""

    # allow_inf_nan=False: a non-finite number would not survive our own encoder.
    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        frozen=False,
        allow_inf_nan=False,
    )

    def to_wire(self) -> bytes:
        return self.model_dump_json(by_alias=True, exclude_none=True).encode()


class Point(WireModel):
    """A point on the page."""

    x: float
    y: float


class WireAction(WireModel):
    """One TLDraw-native operation. `id` stays stable across partial updates."""

    id: str = Id
    name: WireVerb
    params: dict[str, JsonValue] = Field(default_factory=dict)


# Sequence numbers are Postgres `integer`s: a larger one from a browser must fail validation
# here, not the query it would reach (where it failed the room's whole ack batch).
_SEQ_MAX = 2**31 - 1


class ActionEnvelope(WireModel):
    """steward → browsers on `agent:action`: a sequenced batch of actions."""

    v: Literal["tldraw-actions/1"] = PROTOCOL_VERSION
    session_id: str = Id
    seq: int = Field(ge=1, le=_SEQ_MAX)
    partial: bool | None = None
    actions: list[WireAction] = Field(max_length=MAX_ACTIONS_PER_ENVELOPE)
    ts: float


class EnvelopeBatch(WireModel):
    """steward → browsers on `agent:actions`: envelopes (of one or more sessions) in send
    order, one packet; each is handled and acked as if it had come alone on `agent:action`."""

    envelopes: list[ActionEnvelope] = Field(min_length=1, max_length=MAX_ENVELOPES_PER_BATCH)


class Ack(WireModel):
    """browser → steward on `agent:ack`: the listed actions were *applied*. `cumulative`:
    every envelope of the session up to `seq` is applied (one ack for the envelopes of a
    batch or a filled gap; `applied` then lists their ids, at most `MAX_ACKED_IDS`)."""

    session_id: str = Id
    seq: int = Field(ge=1, le=_SEQ_MAX)
    applied: list[str] = Field(max_length=MAX_ACTIONS_PER_ENVELOPE)
    applied_at: float
    cumulative: bool | None = None


class ContextRequest(WireModel):
    """steward → host, RPC `steward.context`."""

    request_id: str = Id
    bounds: Box | None = None
    max_size: int | None = Field(default=None, ge=16, le=4096)
    # Byte budget of the encoded screenshot: the host lowers quality, then scale, until it
    # fits (absent: DEFAULT_SCREENSHOT_MAX_BYTES).
    max_bytes: int | None = Field(
        default=None, ge=MIN_SCREENSHOT_MAX_BYTES, le=MAX_SCREENSHOT_BYTES
    )
    want: list[ContextPart] = Field(default_factory=lambda: list(_DEFAULT_WANT))


class ContextCounts(WireModel):
    """How many shapes a context answer describes: on the page, and inside the bounds asked for."""

    shapes: int = Field(ge=0)
    in_bounds: int | None = Field(default=None, ge=0)


class ContextReply(WireModel):
    """Small JSON reply to `steward.context`; screenshot and shapes follow as byte streams."""

    request_id: str = Id
    viewport: Box
    selection: list[str] = Field(default_factory=list, max_length=10_000)
    doc_version: int = Field(ge=0)
    counts: ContextCounts
    # Which byte streams follow, so the steward knows what to wait for.
    streams: list[Literal["screenshot", "shapes"]] = Field(default_factory=list)
    user_changes: list[dict[str, JsonValue]] | None = None

    _finite = field_validator("user_changes")(finite_json)
    _viewport = field_validator("viewport")(bounded_box)


class ViewportUpdate(WireModel):
    """browser → steward on `canvas:viewport`, at most every 80 ms."""

    viewport: Box
    selection: list[str] = Field(default_factory=list, max_length=10_000)
    ts: float

    _viewport = field_validator("viewport")(bounded_box)


class PromptRequest(WireModel):
    """RPC `steward.prompt` from a browser or voice agent. The run sees the caller's view
    (its viewport, selection and recent edits); `selection` given here overrides it."""

    message: str = Field(min_length=1, max_length=MAX_PROMPT_CHARS)
    bounds: Box | None = None
    selection: list[str] | None = None
    # A fairy reached as it is (its own role; a name not in the room reaches its lead).
    fairy: str | None = Field(default=None, max_length=MAX_ID_CHARS)
    # The fairies the prompt is for, in the order picked: one works it solo, two as a duo
    # (the first leads and also draws), three or more as a project the first one leads.
    fairies: list[FairyId] | None = Field(
        default=None, min_length=1, max_length=MAX_FAIRIES_PER_ROOM
    )

    _bounds = field_validator("bounds")(bounded_box)


class ComposingHint(WireModel):
    """browser → steward on `steward:composing`: a user is composing a prompt (at most every
    2 s). `bounds` must be the bounds the coming prompt will carry (null: the sender's own
    view), so the context the steward prefetches now is the one the prompt asks for."""

    bounds: Box | None = None
    ts: float

    _bounds = field_validator("bounds")(bounded_box)


class PromptReply(WireModel):
    """The reply to RPC `steward.prompt`: the run's session id, or why it was refused."""

    session_id: str | None = None
    error: str | None = None


class CancelRequest(WireModel):
    """RPC `steward.cancel`: stop the run `session_id`."""

    session_id: str = Id


class CancelReply(WireModel):
    """The reply to RPC `steward.cancel`: whether it was cancelled, or why not."""

    ok: bool
    error: str | None = None


class RevertRequest(WireModel):
    """RPC `steward.revert`: take back run `session_id` as a whole (a revert's own run too:
    that redoes). Allowed to whoever may cancel the run; a running run is cancelled first."""

    session_id: str = Id


class RevertReply(WireModel):
    """The revert's own run (`session_id`), or a clear error. `left`: shapes changed since
    the run touched them, left as they are (also named in the run's chat reply)."""

    session_id: str | None = None
    error: str | None = None
    left: list[str] | None = None


class Resync(WireModel):
    """browser → steward on `steward:resync`: replay everything after `last_seq`."""

    session_id: str = Id
    last_seq: int = Field(ge=0, le=_SEQ_MAX)


class ChatMessage(WireModel):
    """steward → browsers on `agent:chat`."""

    id: str = Id
    session_id: str = Id
    role: Literal["user", "assistant", "system"]
    text: str
    fairy: str | None = None
    partial: bool | None = None
    # The room's conversation order (`Conversation`): every tab shows items by it.
    n: int | None = Field(default=None, ge=1, le=_SEQ_MAX)
    ts: float


class PromptNotice(WireModel):
    """steward → browsers on `agent:prompt`: a run started, for what and for whom. `asker` is
    the participant identity the prompt came from (the API client's name over HTTP), as the
    steward saw it; never a field of the prompt's payload."""

    session_id: str = Id
    asker: str = Field(min_length=1, max_length=MAX_ID_CHARS)
    source: Literal["browser", "voice", "http"]
    text: str = Field(max_length=MAX_PROMPT_CHARS)
    # Set when the text was cut to fit one packet.
    truncated: bool | None = None
    fairy: str | None = None
    # Set on a revert's run: the run it takes back.
    reverts: str | None = Field(default=None, max_length=MAX_ID_CHARS)
    n: int | None = Field(default=None, ge=1, le=_SEQ_MAX)
    ts: float


class StatusMessage(WireModel):
    """steward → browsers on `agent:status`."""

    session_id: str = Id
    status: SessionStatus
    detail: str | None = None
    fairy: str | None = None
    # On a final status (done, canceled, error): the session's last seq, so a browser can
    # ask for a trailing envelope it missed (no later envelope would show it the gap).
    last_seq: int | None = Field(default=None, ge=0, le=_SEQ_MAX)
    # The conversation order of the run's first status (a run's status keeps its place).
    n: int | None = Field(default=None, ge=1, le=_SEQ_MAX)
    ts: float


class ThoughtMessage(WireModel):
    """steward → browsers on `agent:thought`: a run's `think` or `add_detail`, whole (the
    panel folds a run's thoughts into one row)."""

    session_id: str = Id
    kind: Literal["think", "detail"]
    text: str
    fairy: str | None = None
    n: int | None = Field(default=None, ge=1, le=_SEQ_MAX)
    ts: float


class ConversationRequest(WireModel):
    """RPC `steward.conversation`: the room's conversation after item `after` (0: from the
    oldest kept), for a tab that loads, reloads or joins late. One page per call: the reply
    says `next` when more follow."""

    after: int = Field(default=0, ge=0, le=_SEQ_MAX)


class ConversationReply(WireModel):
    """A page of the room's conversation, in its order (`n`): the prompts, whole chat
    messages, thoughts and each run's latest status. `next`: call again with `after=next`."""

    prompts: list[PromptNotice] = Field(default_factory=list)
    chat: list[ChatMessage] = Field(default_factory=list)
    thoughts: list[ThoughtMessage] = Field(default_factory=list)
    statuses: list[StatusMessage] = Field(default_factory=list)
    next: int | None = None
    error: str | None = None


class CanvasEdit(WireModel):
    """browser → steward on `canvas:edit` (relay mode): the user's own edits."""

    put: list[dict[str, JsonValue]] = Field(default_factory=list, max_length=MAX_EDIT_RECORDS)
    remove: list[str] = Field(default_factory=list, max_length=MAX_EDIT_RECORDS)

    _finite = field_validator("put")(finite_json)


class FairyPresence(WireModel):
    """One fairy as `agent:fairies` shows it: name, colour, mode, position and task area."""

    id: str = Id
    name: str = Field(max_length=64)
    color: str = Field(max_length=32)
    mode: str = Field(max_length=64)
    position: Point
    task_bounds: Box | None = None


class FairiesMessage(WireModel):
    """steward → browsers on `agent:fairies`."""

    fairies: list[FairyPresence] = Field(max_length=MAX_FAIRIES_PER_ROOM)
    ts: float


# tldraw's named colours: a fairy wears one.
FairyColor = Literal[
    "black",
    "grey",
    "light-violet",
    "violet",
    "blue",
    "light-blue",
    "yellow",
    "orange",
    "green",
    "light-green",
    "light-red",
    "red",
]
FairyRole = Literal["solo", "orchestrator", "duo-orchestrator", "drone"]
FairyName = Field(min_length=1, max_length=MAX_FAIRY_NAME_CHARS)


def _fairy_name(name: str) -> str:
    """A fairy's name as people read it: one line, no runs of spaces."""
    cleaned = " ".join(name.split())
    if not cleaned:
        raise ValueError("a fairy's name must have a letter in it")
    return cleaned


class CrewMember(WireModel):
    """One fairy of the room's crew, as people chose it."""

    id: str = Id
    name: str = FairyName
    personality: str = Field(default="", max_length=MAX_PERSONALITY_CHARS)
    color: str = Field(max_length=32)
    role: FairyRole


class SummonRequest(WireModel):
    """RPC `steward.summon`: a new fairy joins the room's crew (up to the room's limit)."""

    name: str = FairyName
    personality: str = Field(default="", max_length=MAX_PERSONALITY_CHARS)
    color: FairyColor | None = None

    _name = field_validator("name")(_fairy_name)


class RenameRequest(WireModel):
    """RPC `steward.rename`: a fairy of the crew gets a new name."""

    fairy_id: str = Id
    name: str = FairyName

    _name = field_validator("name")(_fairy_name)


class DismissRequest(WireModel):
    """RPC `steward.dismiss`: a fairy leaves the crew; whatever it was doing ends as a
    cancel."""

    fairy_id: str = Id


class CrewReply(WireModel):
    """The fairy summoned, renamed or dismissed, or a clear error."""

    fairy: CrewMember | None = None
    error: str | None = None


TaskStatus = Literal["todo", "in-progress", "done"]
ProjectStatus = Literal["active", "done", "aborted"]


class ProjectTaskState(WireModel):
    """One task of a project card: its title, status, the fairy working it and its area."""

    id: str = Id
    title: str = Field(max_length=MAX_TITLE_CHARS)
    status: TaskStatus
    # The fairy working it (a fairy id), or None while nobody is.
    owner: str | None = Field(default=None, max_length=MAX_ID_CHARS)
    area: Box | None = None


class ProjectWait(WireModel):
    """A fairy of the project waiting: on a task (`task`: its id) or on another fairy
    (`fairy`: its id, reaching `mode`)."""

    fairy: str = Id
    task: str | None = Field(default=None, max_length=MAX_ID_CHARS)
    on_fairy: str | None = Field(default=None, max_length=MAX_ID_CHARS)
    mode: str | None = Field(default=None, max_length=64)


class ProjectState(WireModel):
    """steward → browsers on `agent:project`: one project as it stands, sent on every change
    of its plan, tasks or waits, and to a tab that joins. `session_id`: the prompt's run
    that started it (the card sits under that prompt); `asker`: who asked for it."""

    project_id: str = Id
    title: str = Field(max_length=MAX_TITLE_CHARS)
    plan: str = Field(default="", max_length=MAX_PLAN_CHARS)
    kind: Literal["orchestrated", "duo"]
    status: ProjectStatus
    lead: str = Id
    members: list[str] = Field(default_factory=list, max_length=MAX_FAIRIES_PER_ROOM)
    asker: str | None = Field(default=None, max_length=MAX_ID_CHARS)
    session_id: str | None = Field(default=None, max_length=MAX_ID_CHARS)
    tasks: list[ProjectTaskState] = Field(default_factory=list, max_length=MAX_PROJECT_TASKS)
    waits: list[ProjectWait] = Field(default_factory=list, max_length=MAX_PROJECT_TASKS)
    ts: float


class AbortRequest(WireModel):
    """RPC `steward.abort`: end a project now (who asked for it, or a moderator). Its drones
    stop as on a cancel, nothing half drawn stays, and the lead says it ended."""

    project_id: str = Id


class AbortReply(WireModel):
    """The reply to RPC `steward.abort`: whether the project was aborted, or why not."""

    ok: bool
    error: str | None = None


class ProjectRevertRequest(WireModel):
    """RPC `steward.revert_project`: take back every run of a project as one revert (who
    asked for it, or a moderator). An active project is aborted first."""

    project_id: str = Id


# Every message, by the name used in the JSON Schema and the generated TypeScript.
ALL_MESSAGES: dict[str, type[WireModel]] = {
    m.__name__: m
    for m in (
        ActionEnvelope,
        EnvelopeBatch,
        Ack,
        ContextRequest,
        ContextReply,
        ViewportUpdate,
        PromptRequest,
        ComposingHint,
        PromptReply,
        CancelRequest,
        CancelReply,
        RevertRequest,
        RevertReply,
        Resync,
        ChatMessage,
        PromptNotice,
        StatusMessage,
        ThoughtMessage,
        ConversationRequest,
        ConversationReply,
        CanvasEdit,
        FairiesMessage,
        CrewMember,
        SummonRequest,
        RenameRequest,
        DismissRequest,
        CrewReply,
        ProjectState,
        AbortRequest,
        AbortReply,
        ProjectRevertRequest,
    )
}


def jsonable(model: WireModel) -> dict[str, Any]:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)
