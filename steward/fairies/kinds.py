"""The kinds of request a fairy works, each one policy object: what differs between a
one-shot prompt, a solo fairy's, a duo's, a project lead's and a drone's request is data
here, read by the one request runner and the one request builder, never a branch on who
asks.

A request's kind follows from the fairy that works it: a one-shotting fairy (one per asker,
off the roster) works `one-shot` requests; a crew fairy works the kind of its role (`solo`,
`duo` for a duo's lead, `lead` for an orchestrator, `drone`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from steward.actions.fairy_port import ModeName
from steward.actions.registry import ACTIONS
from steward.protocol.limits import MAX_FAIRIES_PER_ROOM

KindName = Literal["one-shot", "solo", "duo", "lead", "drone"]
# The crew roles a fairy of the roster has.
Role = Literal["solo", "orchestrator", "duo-orchestrator", "drone"]


@dataclass(frozen=True, kw_only=True)
class RequestKind:
    """One kind of request; the defaults are a crew fairy's."""

    name: KindName
    # The roster role whose fairies work this kind (None: a one-shotting fairy, off the roster).
    role: Role | None
    # The mode a user's prompt starts it in, and the mode it works one of its tasks in.
    start_mode: ModeName
    working_mode: ModeName | None
    # Budget: a prompt's run is charged once, at its end, in the prompt's guards; a crew
    # request at every model request (a project's requests run with nobody waiting).
    charged: Literal["per-run", "per-request"] = "per-request"
    # Coordinates: the model's (0, 0) is the first view of the run (the asker's), or the
    # room's origin, one for every crew fairy so areas one plans mean the same to all.
    frame: Literal["first-view", "room-origin"] = "room-origin"
    # Where a request looks: where the asker looks, every time; or the fairy's own place
    # (its task, its own view, the project it leads, else the asker's or the room's view).
    look: Literal["asker", "own"] = "own"
    # Its context moves the room's view, and its request carries the fairy's brief (who it is,
    # its project and task) and the scripted model's hints.
    in_room: bool = True
    # A view move (setMyView) lasts beyond the run.
    view_lasts: bool = True
    # Wire ids count the run's own requests (its session is its own), or the session's.
    numbering: Literal["run", "session"] = "session"
    # Refused actions come back as a queued feedback request, or only as the next request's
    # lints.
    feedback: Literal["queued", "lints"] = "queued"
    # A follow-up request says so with a `scheduled` status first.
    announces_followups: bool = False
    # History: the fairy's own remembered items filtered by its memory level, or the room's
    # one-shot runs (the asker's own in full) with the crew's beside.
    history: Literal["remembered", "room-runs"] = "remembered"
    # Actions: its mode's, or its mode's without the fairy actions (no crew to move).
    actions: Literal["mode", "canvas-only"] = "mode"
    # It leads a project: its actions count as the lead's, its history is measured.
    leads: bool = False
    # Its todo list outlives a task (a solo fairy plans its own tasks).
    keeps_todo: bool = False
    # How many picked fairies it leads when a prompt names them (itself included), and the
    # kind the others work; None: a prompt's picked group is never led by this kind.
    leads_picked: tuple[int, int] | None = None
    members: KindName | None = None

    def enabled(self, mode_actions: tuple[str, ...]) -> tuple[str, ...]:
        """The actions a request of this kind may use, of its mode's."""
        if self.actions == "mode":
            return mode_actions
        return tuple(n for n in mode_actions if ACTIONS[n].family != "fairy")


ONE_SHOT = RequestKind(
    name="one-shot",
    role=None,
    start_mode="one-shotting",
    working_mode=None,
    charged="per-run",
    frame="first-view",
    look="asker",
    in_room=False,
    view_lasts=False,
    numbering="run",
    feedback="lints",
    announces_followups=True,
    history="room-runs",
    actions="canvas-only",
    keeps_todo=True,
)
SOLO = RequestKind(
    name="solo",
    role="solo",
    start_mode="soloing",
    working_mode="working-solo",
    keeps_todo=True,
    leads_picked=(1, 1),
)
DUO = RequestKind(
    name="duo",
    role="duo-orchestrator",
    start_mode="duo-orchestrating-active",
    working_mode="working-orchestrator",
    leads=True,
    leads_picked=(2, 2),
    members="drone",
)
LEAD = RequestKind(
    name="lead",
    role="orchestrator",
    start_mode="orchestrating-active",
    working_mode="working-orchestrator",
    leads=True,
    leads_picked=(3, MAX_FAIRIES_PER_ROOM),
    members="drone",
)
DRONE = RequestKind(
    name="drone", role="drone", start_mode="one-shotting", working_mode="working-drone"
)

KINDS: dict[KindName, RequestKind] = {k.name: k for k in (ONE_SHOT, SOLO, DUO, LEAD, DRONE)}
BY_ROLE: dict[Role, RequestKind] = {k.role: k for k in KINDS.values() if k.role is not None}


def of_role(role: Role) -> RequestKind:
    """The kind of request a crew fairy of `role` works."""
    return BY_ROLE[role]


def directing(picked: int) -> tuple[RequestKind, RequestKind | None]:
    """The kind the first of `picked` fairies works and the kind the others work: one alone
    works solo, two work as a duo (the first leads and also draws), three or more as a
    project the first one leads."""
    for kind in KINDS.values():
        low, high = kind.leads_picked or (0, -1)
        if low <= picked <= high:
            return kind, KINDS[kind.members] if kind.members is not None else None
    raise ValueError(f"no kind leads {picked} picked fairies")
