"""The one request builder of every fairy, crew or one-shotting: where a request looks, the
context it fetches there, and the prompt state built from the room's fairy state, its mode's
parts and that context.

The area a request shows is one `Look` (`look.py`): the screenshot is fetched for it, and
the viewport text and shape tiers describe it, named for what it is. What differs between
kinds of request (where they look, whether their context moves the room's view, their
history and actions) is the request's kind (`kinds.py`); what a prompt says beside its text
(its mode, bounds, selection, asker, clock) is `Request.asked`.
"""

from __future__ import annotations

from typing import Any

from steward.actions.base import Scheduled
from steward.canvas.apply import Shapes
from steward.canvas.coords import CoordinateSpace
from steward.fairies.around import with_around
from steward.fairies.kinds import RequestKind
from steward.fairies.look import Look, shown
from steward.fairies.memory import filter_history, history_tokens
from steward.fairies.modes import ModeDefinition, mode
from steward.fairies.neighbours import neighbourhood_of
from steward.fairies.project_task import Task
from steward.fairies.prompt_parts import FairyView, brief
from steward.fairies.room_fairies import Request, RoomFairies
from steward.fairies.room_runs import crew_runs, one_shot_runs, own_items, thread
from steward.model.base import CanvasFacts, ModelRequest
from steward.ports import CanvasSnapshot, SessionPort
from steward.prompt.parts.chat_history import thread_for
from steward.prompt.registry import build_request
from steward.prompt.state import ChatItem, PromptState
from steward.protocol.box import Box, union
from steward.turns.bounds_guard import shapes_in
from steward.turns.run import Run


def led_area(room: RoomFairies, fairy_id: str) -> Box | None:
    """The area of the project `fairy_id` leads: every task area of it together (None: it
    leads none, or no task has an area yet). A leader reviews its members' work there."""
    project = room.board.active_project_of(fairy_id)
    if project is None or project.orchestrator != fairy_id:
        return None
    return union(t.bounds for t in room.board.project_tasks(project.id) if t.bounds is not None)


def view_of(room: RoomFairies, fairy_id: str) -> Box:
    """Where the fairy looks: its task area while it works one, else its own view
    (moved by setMyView or fly-to-bounds), else the project it leads, else the room's."""
    task = room.board.working_task_of(fairy_id)
    if task is not None and task.bounds is not None:
        return task.bounds
    return room.fairy(fairy_id).view or led_area(room, fairy_id) or room.viewport


def look_of(room: RoomFairies, fairy_id: str, req: Request, session: SessionPort) -> Look:
    """Where a turn starts looking: its task area, else its own view (setMyView,
    fly-to-bounds), else the area of the project it leads, else the asker's view when a
    user's prompt in the asker's own session began the turn, else the room's. A kind that
    looks where its asker looks (a one-shot prompt) starts there, every time."""
    if room.kind_of(fairy_id).look == "asker":
        return Look(None, "asker")
    task = room.board.working_task_of(fairy_id)
    if task is not None and task.bounds is not None:
        return Look(task.bounds, "task")
    own = room.fairy(fairy_id).view
    if own is not None:
        return Look(own, "own")
    led = led_area(room, fairy_id)
    if led is not None:
        return Look(led, "project")
    if req.origin == "user" and session is room.fairy(fairy_id).lent:
        return Look(None, "asker")
    return Look(room.viewport, "room")


async def context(
    room: RoomFairies, fairy_id: str, req: Request, session: SessionPort, area: Box | None
) -> CanvasSnapshot:
    """The context of `area` (None: the asker's view, as the session's browser reports, or
    the bounds a prompt gave). The context of a kind not in the room (a one-shot prompt) is
    its asker's alone: the room's view and origin stay the crew's."""
    kind = room.kind_of(fairy_id)
    current = mode_of(room, fairy_id, req)
    sees = "screenshot" in current.parts
    box = area or req.asked.bounds
    # A working fairy also gets a low-detail image around its task area (`around.py`).
    task = room.board.working_task_of(fairy_id) if kind.in_room else None
    nearby = task.bounds if sees and "neighbours" in current.parts and task is not None else None
    project = room.board.active_project_of(fairy_id) if nearby is not None else None
    others = [
        (t.id, t.bounds)
        for t in (room.board.project_tasks(project.id) if project is not None else [])
        if t.bounds is not None and (task is None or t.id != task.id)
    ]
    ctx = await with_around(
        session, nearby, session.request_context(bounds=box, want_screenshot=sees), others=others
    )
    if not kind.in_room:
        return ctx
    if ctx.viewport.w > 0 and ctx.viewport.h > 0 and not ctx.degraded:
        room.viewport = ctx.viewport
    if room.origin is None:
        # One origin for the room's fairies, so areas one plans mean the same to all.
        frame = CoordinateSpace.at(room.viewport.x, room.viewport.y)
        room.origin = (frame.origin_x, frame.origin_y)
    return ctx


def mode_of(room: RoomFairies, fairy_id: str, req: Request) -> ModeDefinition:
    """The mode a request runs in: the one its prompt set, else the fairy's."""
    return req.asked.mode or mode(room.roster.get(fairy_id).mode)


def fairy_view(room: RoomFairies, fairy_id: str, request: str, shapes: Shapes) -> FairyView:
    fairy = room.roster.get(fairy_id)
    project = room.board.active_project_of(fairy_id)
    return FairyView(
        fairy=fairy,
        mode=mode(fairy.mode),
        others=[f for f in room.roster.fairies.values() if f.id != fairy_id],
        project=project,
        project_tasks=room.board.project_tasks(project.id) if project else [],
        task=room.board.working_task_of(fairy_id),
        own_tasks=room.board.solo_tasks_of(fairy_id),
        history=room.history_of(fairy_id),
        shapes=shapes,
        viewport=view_of(room, fairy_id),
        request=request,
        origin=room.origin or (0.0, 0.0),
        free=room.free_members(fairy_id),
        picked=room.fairy(fairy_id).picked is not None,
    )


def hints(room: RoomFairies, view: FairyView) -> dict[str, Any]:
    """Facts for the scripted project model, in the model's coordinates."""
    ox, oy = view.origin

    def box(r: Box) -> dict[str, float]:
        return {"x": r.x - ox, "y": r.y - oy, "w": r.w, "h": r.h}

    def t(task: Task) -> dict[str, Any]:
        return {
            "id": task.id,
            "title": task.title,
            "status": task.status,
            "assigned_to": task.assigned_to,
            "bounds": box(task.bounds) if task.bounds else None,
        }

    area = view.area
    visible = shapes_in(view.shapes, area) if area else list(view.shapes.values())
    return {
        "mode": view.fairy.mode,
        "fairy_id": view.fairy.id,
        "message": view.request,
        "viewport": box(view.viewport),
        "project": {"id": view.project.id, "title": view.project.title} if view.project else None,
        "tasks": [t(x) for x in view.project_tasks],
        "own_tasks": [t(x) for x in view.own_tasks],
        "task": t(view.task) if view.task else None,
        "free_drones": view.free,
        "room_task_ids": list(room.board.tasks),
        "existing_ids": [s["id"] for s in visible],
        # What is on the canvas, for scripted plans in free space.
        "canvas": CanvasFacts(dict(view.shapes), CoordinateSpace(ox, oy)),
    }


def _remembered(room: RoomFairies, fairy_id: str, req: Request, view: FairyView) -> list[ChatItem]:
    """A crew fairy's remembered items, the plan pinned, with the room's one-shot runs."""
    current = view.mode
    if room.kind_of(fairy_id).leads and view.project is not None:
        room.stats.history_tokens_orchestrator += history_tokens(
            filter_history(view.history, current.memory)
        )
        crew = (view.project.orchestrator, *view.project.members)
        room.stats.history_tokens_unfiltered += sum(
            history_tokens(room.history_of(f)) for f in crew
        )
    remembered = filter_history(view.history, current.memory)
    if remembered and remembered[-1].kind == "prompt" and remembered[-1].text == req.text:
        remembered = remembered[:-1]  # the request itself is the `messages` part
    # history: response format, pinned plan; other people's one-shot runs one line each
    return thread(own_items(remembered, current.memory), one_shot_runs(room, current.memory))


def _room_runs(room: RoomFairies, current: ModeDefinition, session: SessionPort) -> list[ChatItem]:
    """The room's one-shot runs (its asker's own in full) and the crew's runs beside them,
    without this run's own request (the `messages` part)."""
    level = current.memory
    runs = thread(one_shot_runs(room, level), crew_runs(room, level))
    return thread_for(runs, session.session_id)


def _history(
    room: RoomFairies,
    fairy_id: str,
    req: Request,
    kind: RequestKind,
    current: ModeDefinition,
    view: FairyView | None,
    session: SessionPort,
) -> list[ChatItem]:
    if kind.history == "remembered" and view is not None:
        return _remembered(room, fairy_id, req, view)
    return _room_runs(room, current, session)


def prompt(
    room: RoomFairies,
    fairy_id: str,
    req: Request,
    run: Run,
    context: CanvasSnapshot,
    followup: Scheduled | None,
    look: Look,
) -> ModelRequest:
    session, asked, kind = run.session, req.asked, room.kind_of(fairy_id)
    # The area this request shows (image and shape lists alike), named for what it is; the
    # selection only in a run a user's prompt began, in the asker's own session.
    lent = session is room.fairy(fairy_id).lent
    area = shown(look, context, askers=lent)
    current = mode_of(room, fairy_id, req)
    view: FairyView | None = None
    if kind.in_room:
        view = fairy_view(room, fairy_id, req.text, session.canvas.shapes)
        view.viewport = area.viewport
        view.frame = run.ctx.coords
    # The asker's selection at prompt time (the browser's, else the prompt's own).
    selected = context.selection or list(asked.selection)
    selection = run.selection_for(selected, asked=lent and req.origin == "user")
    bounds = asked.bounds
    # [run-feedback hook] this run's own notes and lints, never another run's
    notes, lints = room.feedback.take(f"{session.session_id}:{fairy_id}", session.canvas.shapes)
    state = PromptState(
        message=req.text,
        request_from="user" if req.origin == "user" else "steward",
        shapes=session.canvas.shapes,
        viewport=area.viewport,
        view_kind=area.kind,
        user_viewport=area.asker_view,
        coords=run.ctx.coords,
        enabled_actions=kind.enabled(current.actions),
        selection=selection,
        context_bounds=bounds,
        screenshot=context.screenshot,
        screenshot_type=context.screenshot_type,
        history=_history(room, fairy_id, req, kind, current, view, session),
        memory_level=current.memory,
        asker=asked.asker,
        # A person's prompt: who asked and how (a crew fairy's, as its state keeps them).
        asked_by=(asked.asker or room.fairy(fairy_id).asker) if req.origin == "user" else None,
        channel=(asked.channel or room.fairy(fairy_id).channel) if req.origin == "user" else None,
        user_changes=list(context.user_changes),
        view_note=context.view_note,
        todo=run.ctx.todo,
        scheduled=list(run.ctx.scheduled),
        followup=followup,
        now_iso=asked.clock().isoformat(timespec="seconds"),
        blurry_cap=asked.blurry_cap,
        mode=current.name,
        fairy=brief(view) if view is not None else None,
        notes=notes,
        lints=lints,
        neighbourhood=(
            neighbourhood_of(view.task, view.project_tasks, room.made_by) if view else None
        ),
        around=context.around,
    )
    request = build_request(state, current)
    if view is not None:
        request.hints["fairy"] = hints(room, view)
    return request
