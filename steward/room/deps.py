"""What a room runtime needs from the composition root (`steward/service.py`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from livekit.agents import stt

from steward.config import Settings
from steward.ports import AgentRunner
from steward.room.inbound.crew import CrewDesk
from steward.room.runs.sessions import FairyDesk
from steward.room.runs.steering import ProjectDesk
from steward.store.conversation import ConversationRepo
from steward.store.crew import CrewStore
from steward.store.grants import GrantBindings
from steward.store.outbox import Outbox
from steward.store.project_runs import ProjectRuns


@dataclass
class RoomDeps:
    """What a room runtime needs from the composition root."""

    settings: Settings
    outbox: Outbox
    runner: Callable[[], AgentRunner]
    # The fairy runtime, as the room's sessions ask it about a fairy's own runs (whom its
    # fairy works for, its mode, a user's cancel); None: no fairies in this process.
    fairies: FairyDesk | None = None
    # Where each room's conversation is kept; None keeps it in memory only.
    conversation: ConversationRepo | None = None
    # The room's crew (where it is stored, and the fairy runtime told of its changes) and
    # its projects (who asked, their runs, and the runtime that aborts them); None: no
    # fairies, and the crew and steering RPCs say so.
    crew_store: CrewStore | None = None
    crew: CrewDesk | None = None
    project_runs: ProjectRuns | None = None
    projects: ProjectDesk | None = None
    # Where prompt grants are bound to sessions; None keeps the bindings in memory only.
    grant_bindings: GrantBindings | None = None
    # A session's models, tokens and estimated cost, for its `session_ended` line.
    usage_of: Callable[[str], Awaitable[dict[str, object]]] | None = None
    # The speech engine shared by every room (None: the steward transcribes nobody).
    speech: stt.STT[Any] | None = None
    # Whether this process still holds the room's lease (room id → bool): the gate of every
    # publish besides the fenced outbox appends. None: no lease (nothing is gated).
    holds_lease: Callable[[str], Awaitable[bool]] | None = None
