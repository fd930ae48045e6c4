"""What a fairy's prompt says about the fairy itself: `FairyView` (the runtime's facts for
one turn) → `FairyBrief` (plain lines for the prompt registry's fairy parts).

The canvas parts (screenshot, shapes, viewport, …) are the prompt registry's own; a working
fairy's view is its task area.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Any

from steward.canvas.coords import CoordinateSpace
from steward.fairies.memory import HistoryItem
from steward.fairies.modes import WORKING_MODE, ModeDefinition, mode
from steward.fairies.project_task import Task
from steward.fairies.projects import Project
from steward.fairies.roster import Fairy, default_personality
from steward.prompt.parts.neighbours import adjoining
from steward.prompt.state import FairyBrief
from steward.protocol.box import Box


@dataclass
class FairyView:
    """Everything a part may read for one turn of one fairy."""

    fairy: Fairy
    mode: ModeDefinition
    others: list[Fairy]
    project: Project | None
    project_tasks: list[Task]
    task: Task | None  # the task being worked, if any
    own_tasks: list[Task]
    history: list[HistoryItem]
    shapes: dict[str, dict[str, Any]]
    viewport: Box
    selection: list[str] = field(default_factory=list)
    request: str = ""
    origin: tuple[float, float] = (0.0, 0.0)  # of the model's coordinates
    free: list[str] = field(default_factory=list)  # the drones free to join its project
    picked: bool = False  # the prompt picked its fairies (they, not every idle drone, join)
    # The request's frame: every number the fairy parts write is in it (offset, rounded).
    frame: CoordinateSpace = field(default_factory=CoordinateSpace)

    @property
    def area(self) -> Box | None:
        return self.task.bounds if self.task is not None else None


def _box(r: Box, frame: CoordinateSpace) -> str:
    return frame.box_text(r.x, r.y, r.w, r.h)


def members_actions() -> str:
    """What a member working a task can write, for the lead that plans its work: a lead has
    none of the drawing actions, and must not plan what no member can do."""
    return (
        "Your members, working a task, can use only these actions: "
        + ", ".join(mode(WORKING_MODE["drone"]).actions)
        + ".\nWhat their shapes take, so a task asks only for what can be set: a text's"
        " `fontSize` (its height in px, 24 by default) and `textAlign` (start, middle, end);"
        " a box's label (one line needs a box about 62 px tall); an arrow's two ends (x1, y1,"
        " x2, y2, each may be bound to a shape) and a label drawn along it; a pen's points."
    )


def _project_orchestrator(v: FairyView) -> str | None:
    # Who joins and why (a reader saw an idle fairy listed as a member, and another idle one
    # left out of a duo, and could not tell how either came about).
    who = (
        "the fairies the user picked with you (those free to help), each yours to give a task"
        if v.picked
        else "every drone free when it starts"
    )
    if v.project is None:
        free = "You have no project yet. Fairies free to help: " + (", ".join(v.free) or "none")
        return f"{free}\nA project you start takes {who}.\n{members_actions()}"
    p = v.project
    whom = "picked with you" if v.picked else "free when the project started"
    lines = [
        f'Your project "{p.title}" ({p.status}): {p.description}',
        f"Plan: {p.plan}",
        f"Members (every fairy {whom}; give any of them a task): " + ", ".join(p.members),
        members_actions(),
        "Tasks:",
    ]
    lines += [_task_line(v, t) for t in v.project_tasks] or ["- none yet"]
    return "\n".join(lines)


def _task_line(v: FairyView, t: Task) -> str:
    """A task of the led project; the one the lead works itself (a duo's) only by name, as
    "You are working on" tells it in full."""
    if v.task is not None and t.id == v.task.id:
        return f'- [{t.id}] "{t.title}" ({t.status}, yours): see "You are working on" below'
    return f"- {t.describe(v.frame)}"


def _project_drone(v: FairyView) -> str | None:
    if v.project is None:
        return None
    # The task itself is told once, by the tasks part ("You are working on: …").
    mine = f'task "{v.task.id}"' if v.task is not None else "no task right now"
    return (
        f'You are a member of the project "{v.project.title}" led by {v.project.orchestrator};'
        f" you work on {mine}."
    )


def meeting(area: Box, other: Box) -> str | None:
    """How `other` meets the task area `area`, in words (None: it does not meet it): the
    same area (an earlier task there), overlapping it (a ground under a row of shops),
    or next to it within the margin a shape counts as next to an area, on which side.
    A task far along the same row meets nothing."""
    if other == area:
        return "the same area as yours"
    if other.intersects(area):
        return "overlapping yours"
    if not other.intersects(adjoining(area)):
        return None
    side = (
        "on the left"
        if other.max_x <= area.x
        else "on the right"
        if other.x >= area.max_x
        else "above"
        if other.max_y <= area.y
        else "below"
    )
    return f"next to yours, {side}"


def _alignment(v: FairyView, area: Box) -> str | None:
    """What meets a task's area among the tasks that have started or finished (what has not
    started has nothing to line up with yet): where parts of one picture meet, they share
    one scale and line up, whether seen from the side or from above; a different drawing
    beside it is only kept clear of."""
    if v.project is None or v.task is None:
        return None
    own = v.task.id
    met = [
        (t, how)
        for t in v.project_tasks
        if t.id != own and t.status != "todo" and t.bounds
        if (how := meeting(area, t.bounds)) is not None
    ]
    if not met:
        return None
    names = "; ".join(f'"{t.title}" ({t.id}, {t.status}), {how}' for t, how in met)
    return (
        f"Tasks that meet yours, started or done: {names}. Where your drawing and theirs are "
        "one picture, keep their scale (a door, a tree, a bed the same size in each) and line "
        "up the parts that meet: the same ground line in a view from the side, the same walls, "
        "paths and edges in a plan from above; build on what a task in the same area drew. "
        "Where theirs is another drawing (a plan beside a view from the side), keep clear of "
        "it. The image around your area and the shapes next to it show their work."
    )


def _working_tasks(v: FairyView) -> str | None:
    if v.task is not None:
        if v.task.bounds is None:
            return f"You are working on: {v.task.describe(v.frame)}"
        back = (
            "When you mark it done, you are called back to lead the project."
            if v.fairy.role == "duo-orchestrator"
            else ""
        )
        lines = [
            f"You are working on: {v.task.describe(v.frame)}",
            f"You can only see and edit inside your task area ({_box(v.task.bounds, v.frame)}).",
            back,
            _alignment(v, v.task.bounds) or "",
        ]
        return "\n".join(line for line in lines if line)
    if v.own_tasks:
        return "Your tasks:\n" + "\n".join(f"- {t.describe(v.frame)}" for t in v.own_tasks)
    return None


# How far past the view a fairy is "far outside" it (at least; a wide view counts its size).
FAR_BEYOND_VIEW = 2000.0


def whereabouts(view: Box, x: float, y: float) -> str:
    """Where a fairy is, said plainly beside its position: a fairy resting where fairies
    start (the page's beginning) can lie tens of thousands of units from a far-off view, and
    its numbers alone read like a mistake."""
    if view.contains(Box(x, y, 0, 0)):
        return ""
    # "Far" is far on any drawing: a drone's view is its task area, often a few hundred
    # units, and a neighbour drawing beside it is not far.
    far = view.expand(max(view.w, view.h, FAR_BEYOND_VIEW))
    return ", far outside your view" if not far.contains(Box(x, y, 0, 0)) else ", outside your view"


def brief(v: FairyView) -> FairyBrief:
    """What the fairy parts of the prompt registry show (personality, other_fairies,
    project, tasks); each mode lists the parts it sees."""
    # Fairies stored before personalities were handed out have none: a stable one by id.
    personality = v.fairy.personality or default_personality(zlib.crc32(v.fairy.id.encode()))
    others = tuple(
        f"- {f.id} ({f.name}, {f.role}): {f.mode} at {v.frame.point_text(f.x, f.y)}"
        + whereabouts(v.viewport, f.x, f.y)
        for f in v.others
    )
    if v.fairy.role in ("orchestrator", "duo-orchestrator"):
        project = _project_orchestrator(v)
    else:
        project = _project_drone(v)
    tasks = _working_tasks(v)
    return FairyBrief(
        id=v.fairy.id,
        name=v.fairy.name,
        personality=personality,
        others=others,
        project=tuple(project.splitlines()) if project else (),
        tasks=tuple(tasks.splitlines()) if tasks else (),
    )
