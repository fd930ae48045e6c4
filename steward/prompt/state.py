"""Everything prompt parts may read for one request (plain data; no I/O)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from steward.actions.base import Scheduled, TodoItem
from steward.canvas.apply import Shapes
from steward.canvas.coords import CoordinateSpace
from steward.ports import Picture, PromptChannel
from steward.protocol.box import Box

MemoryLevel = Literal["fairy", "project", "task"]
# What the viewport (and the screenshot and shape lists of the same area) of a request is:
# the asker's view, the agent's own view (moved by setMyView), an area under review, the
# agent's task area, or the room's view (no asker: the view a browser last reported).
ViewKind = Literal["asker", "own", "review", "task", "project", "room"]


@dataclass
class ChatItem:
    """One line of chat history as a prompt shows it: who said it, at what memory level, for which
    run and asker."""

    role: Literal["user", "assistant", "system"]
    text: str
    level: MemoryLevel = "fairy"
    # An action the agent wrote, as the model writes it ({"_type": ..., ...}); `text` is
    # then its name, or for a message (the agent's messages are actions too) its words.
    action: dict[str, Any] | None = None
    who: str | None = None  # who asked for the run it belongs to (participant identity)
    run: str | None = None  # the run (session id) it belongs to
    # A request (role "user"): the person who wrote it, named in its label ("[alice asked]").
    asked_by: str | None = None
    # A steward's note that says how its run ended without its answer (timed out, failed,
    # stopped): a summarised run keeps it.
    ended: bool = False
    # Work a project's fairies did for `who` (not a one-shot run of theirs).
    crew: bool = False
    # The first request and the plan: shown in full however long the history grows.
    pinned: bool = False


@dataclass(frozen=True)
class NeighbourTask:
    """Another task of a working fairy's project, for the neighbours part."""

    id: str
    title: str
    assigned_to: str | None
    bounds: Box
    status: str = "todo"
    made: frozenset[str] = frozenset()  # the shapes its fairy drew


@dataclass(frozen=True)
class Neighbourhood:
    """Around a working fairy's task area: what it may look at, not edit."""

    area: Box  # its own task area
    tasks: tuple[NeighbourTask, ...] = ()  # the project's other tasks with an area


@dataclass(frozen=True)
class FairyBrief:
    """Who the agent is when it is a fairy, as lines for the fairy parts (plain text)."""

    id: str
    name: str
    personality: str
    others: tuple[str, ...] = ()  # one line per other fairy in the room
    project: tuple[str, ...] = ()  # the project it leads or works in
    tasks: tuple[str, ...] = ()  # its own tasks, or the task it works on


@dataclass
class PromptState:
    """Everything the prompt parts of one request read: message, shapes, view, coordinates, actions,
    history and fairy facts."""

    message: str
    shapes: Shapes
    viewport: Box  # the area this request shows (image and shape lists), page coordinates
    coords: CoordinateSpace
    enabled_actions: tuple[str, ...]
    view_kind: ViewKind = "asker"
    # Who the request comes from: a person ("user"), or the steward waking the agent (a task
    # done, a wait met, feedback): then the request line must not say a user wrote it.
    request_from: str = "user"
    # How the user's words came (typed in the panel, the room's chat, spoken, HTTP): the
    # request says so, and where the reply will be read. None: not known (not said).
    channel: PromptChannel | None = None
    # Who asked for this request (the request_line part names them); unlike `asker`, it does
    # not make the history read their runs as this agent's own.
    asked_by: str | None = None
    user_viewport: Box | None = None  # the asker's, when the area shown is another
    # Set when the view is not the asker's (no browser behind the prompt): whose it is.
    view_note: str | None = None
    selection: list[str] = field(default_factory=list)
    context_bounds: Box | None = None
    screenshot: bytes | None = None
    screenshot_type: str = "image/jpeg"  # its media type, as the host sent it
    history: list[ChatItem] = field(default_factory=list)
    memory_level: MemoryLevel = "fairy"
    # Who asked for this run: history items of other askers' runs are summarised.
    asker: str | None = None
    neighbourhood: Neighbourhood | None = None
    around: Picture | None = None  # the low-detail image around a working fairy's task area
    user_changes: list[dict[str, Any]] = field(default_factory=list)
    todo: list[TodoItem] = field(default_factory=list)
    scheduled: list[Scheduled] = field(default_factory=list)
    followup: Scheduled | None = None
    now_iso: str = ""
    blurry_cap: int = 300
    mode: str = "one-shotting"
    fairy: FairyBrief | None = None
    # What the steward changed or refused in the agent's previous actions (dropped fields,
    # missing shapes, renamed ids), told back so the model can correct itself.
    notes: list[str] = field(default_factory=list)
    # Canvas problems the same run's previous request caused (quality report lints).
    lints: list[str] = field(default_factory=list)
