"""Test models for the local Messages server: they know only what each request says.

- `SchemaResponder` answers with actions drawn from the request's own response schema
  (`SchemaSampler`), referring to shapes it was shown and drawing inside the bounds it was
  given, streamed in random chunkings. A request without a schema gets an empty answer: the
  model has nothing it may say.
- `PlanResponder` works a fairy project the way a careful model would, from the request alone:
  an orchestrator plans tasks in its view and directs the fairies it was told about (a duo
  lead takes a part itself), waits, then reviews and ends; a plan under way has its todo
  tasks started (when their fairy works nothing) before it waits; a solo fairy plans one task and
  starts it; a working fairy draws inside its task area and marks its task done; any other
  mode draws one labelled shape in its bounds and says so.

Both record every request they answered (`answered`), so tests can check what each role saw.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from steward.protocol.box import Box
from steward_tools.rigs.anthropic_server import Reply
from steward_tools.rigs.request_text import RequestView, read_request, variant_name, variants
from steward_tools.rigs.schema_sampler import Knowledge, SchemaSampler


@dataclass
class Answer:
    """One answer a test model gave: what the request said and the actions it wrote."""

    view: RequestView
    actions: list[dict[str, Any]]


def continuation(prefill: str, actions: list[dict[str, Any]]) -> str:
    """The response text after the prefilled opening (or the whole object without one)."""
    if prefill.rstrip().endswith("["):
        return ", ".join(json.dumps(a) for a in actions) + "]}"
    return json.dumps({"actions": actions})


def random_chunks(text: str, rng: random.Random) -> list[str]:
    """Split as a network might: mostly small pieces, sometimes single characters or a lump."""
    out: list[str] = []
    i = 0
    while i < len(text):
        roll = rng.random()
        size = 1 if roll < 0.2 else rng.randint(2, 12) if roll < 0.85 else rng.randint(13, 200)
        out.append(text[i : i + size])
        i += size
    return out


def knowledge(view: RequestView) -> Knowledge:
    return Knowledge(
        shape_ids=list(view.shapes),
        bounds=view.bounds or Box(0, 0, 800, 600),
        task_ids=[t.id for t in view.tasks],
        fairy_ids=list(view.fairies),
        todo_ids=list(view.todo_ids),
    )


@dataclass
class SchemaResponder:
    """A test model that answers with actions sampled from the request's own schema, about the
    shapes it was shown."""

    seed: int = 0
    max_actions: int = 6
    answered: list[Answer] = field(default_factory=list)

    def actions(
        self, view: RequestView, rng: random.Random, skip: Callable[[str], bool] | None = None
    ) -> list[dict[str, Any]]:
        """Sampled actions; `skip` leaves out the schema's variants of the names it picks."""
        if view.schema is None:
            return []
        items = view.schema.get("properties", {}).get("actions", {}).get("items", {})
        if skip is not None:
            kept = [v for v in variants(view.schema) if not skip(variant_name(v))]
            if not kept:
                return []
            items = {"anyOf": kept}
        sampler = SchemaSampler(view.schema, rng, knowledge(view))
        return [sampler.value(items, "action") for _ in range(rng.randint(1, self.max_actions))]

    def __call__(self, body: dict[str, Any]) -> Reply:
        view = read_request(body)
        rng = random.Random(f"{self.seed}:{len(self.answered)}")
        actions = self.actions(view, rng)
        self.answered.append(Answer(view, actions))
        return Reply(random_chunks(continuation(view.prefill, actions), rng))


# The actions that mark a working task done, by mode.
_DONE = ("mark-my-task-done", "mark-duo-task-done", "mark-task-done")


def _grid(area: Box, n: int) -> list[Box]:
    """`n` side-by-side areas filling `area`, with a gap between them."""
    gap = 40.0
    w = (area.w - gap * (n - 1)) / n
    return [Box(area.x + i * (w + gap), area.y, w, area.h) for i in range(n)]


@dataclass
class PlanResponder:
    """See the module doc; `chunk` fixes the stream's piece size (0: random chunkings)."""

    seed: int = 0
    chunk: int = 0
    answered: list[Answer] = field(default_factory=list)
    plans: int = 0  # task ids given so far

    def __call__(self, body: dict[str, Any]) -> Reply:
        view = read_request(body)
        rng = random.Random(f"{self.seed}:{len(self.answered)}")
        actions = self.actions(view)
        self.answered.append(Answer(view, actions))
        text = continuation(view.prefill, actions)
        if self.chunk > 0:
            return Reply([text[i : i + self.chunk] for i in range(0, len(text), self.chunk)])
        return Reply(random_chunks(text, rng))

    def actions(self, view: RequestView) -> list[dict[str, Any]]:
        names = set(view.action_names)
        if "start-project" in names or "start-duo-project" in names:
            return self._orchestrate(view, "start-duo-project" in names)
        done = next((n for n in _DONE if n in names), None)
        if done is not None:
            return self._work(view, done)
        if "create-task" in names and "start-task" in names:
            return self._solo(view)
        return self._draw(view, view.bounds or Box(0, 0, 800, 600), "one")

    def _orchestrate(self, view: RequestView, duo: bool) -> list[dict[str, Any]]:
        k = "duo-" if duo else "project-"
        wait = {"_type": "await-duo-tasks-completion" if duo else "await-tasks-completion"}
        if view.tasks:
            if all(t.status == "done" for t in view.tasks):
                return [
                    {"_type": "think", "text": "Every task is done; the parts sit side by side."},
                    {"_type": "message", "text": "The project is finished."},
                    {"_type": "end-duo-project" if duo else "end-project"},
                ]
            return self._resume_plan(view, duo, wait)
        free = view.free
        if free is None:  # no list given: the drones the roster shows idle
            free = [
                f
                for f, role in view.fairies.items()
                if role == "drone" and view.fairy_modes.get(f) in ("idling", "sleeping")
            ]
        helpers = free[: 1 if duo else 2]
        if duo and view.self_id:
            helpers.append(view.self_id)  # a duo lead works a part itself
        if not helpers:
            return [{"_type": "message", "text": "No fairy is free to help."}]
        area = view.bounds or Box(0, 0, 800, 600)
        out: list[dict[str, Any]] = []
        if view.project_status is None:
            out.append(
                {
                    "_type": "start-duo-project" if duo else "start-project",
                    "title": "Shared picture",
                    "description": "Boxes side by side",
                    "plan": "one area per fairy, side by side, in parallel",
                }
            )
        # Task ids are the room's: numbered on across plans, so they stay unique.
        ids = [f"part{self.plans + i + 1}" for i in range(len(helpers))]
        self.plans += len(helpers)
        for i, (who, box) in enumerate(zip(helpers, _grid(area, len(helpers)), strict=True)):
            out.append(
                {
                    "_type": f"create-{k}task",
                    "taskId": ids[i],
                    "title": f"Part {i + 1}",
                    "text": "Draw one labelled box inside your area.",
                    "x": round(box.x),
                    "y": round(box.y),
                    "w": round(box.w),
                    "h": round(box.h),
                    "assignee": who,
                }
            )
        own = [ids[i] for i, who in enumerate(helpers) if who == view.self_id]
        out += [
            {"_type": f"direct-to-start-{k}task", "taskId": ids[i]}
            for i, who in enumerate(helpers)
            if who != view.self_id
        ]
        # A duo lead starts its own part now (and awaits the rest after it); others wait.
        out.append({"_type": "start-duo-task", "taskId": own[0]} if duo and own else wait)
        return out

    def _resume_plan(
        self, view: RequestView, duo: bool, wait: dict[str, Any]
    ) -> list[dict[str, Any]]:
        """A plan under way: start each todo task whose fairy the task list shows free
        (nothing in progress), then wait for what is in progress."""
        k = "duo-" if duo else "project-"
        busy = {t.assigned_to for t in view.tasks if t.status == "in-progress"}
        out: list[dict[str, Any]] = []
        own: dict[str, Any] | None = None
        for t in view.tasks:
            who = t.assigned_to
            if t.status != "todo" or who is None or who in busy:
                continue
            busy.add(who)
            if who == view.self_id:
                own = {"_type": "start-duo-task", "taskId": t.id}  # ends the turn: last
            else:
                out.append({"_type": f"direct-to-start-{k}task", "taskId": t.id})
        if own is not None:
            return [*out, own]
        if busy:
            return [*out, wait]
        return [{"_type": "message", "text": "No task can start: none has a free fairy."}]

    def _solo(self, view: RequestView) -> list[dict[str, Any]]:
        if not view.tasks:
            area = view.bounds or Box(0, 0, 800, 600)
            box = _grid(area, 2)[0]
            self.plans += 1
            tid = f"solo{self.plans}"
            return [
                {
                    "_type": "create-task",
                    "taskId": tid,
                    "title": "My part",
                    "text": "Draw one labelled box.",
                    "x": round(box.x),
                    "y": round(box.y),
                    "w": round(box.w),
                    "h": round(box.h),
                },
                {"_type": "start-task", "taskId": tid},
            ]
        todo = next((t for t in view.tasks if t.status == "todo"), None)
        if todo is not None:
            return [{"_type": "start-task", "taskId": todo.id}]
        return [{"_type": "message", "text": "All my tasks are done."}]

    def _work(self, view: RequestView, done: str) -> list[dict[str, Any]]:
        mine = next((t for t in view.tasks if t.status == "in-progress"), None)
        area = view.bounds or (mine.bounds if mine else None) or Box(0, 0, 400, 300)
        tag = mine.id if mine is not None else "task"
        out = self._draw(view, area, tag)
        out.append({"_type": done, **({"taskId": mine.id} if mine is not None else {})})
        return out

    def _draw(self, view: RequestView, area: Box, tag: str) -> list[dict[str, Any]]:
        if "create" not in view.action_names:
            return [{"_type": "message", "text": "I cannot draw in this mode."}]
        w, h = max(20.0, area.w / 2), max(20.0, area.h / 2)
        shape = {
            "_type": "rectangle",
            "shapeId": f"box-{tag}",
            "x": round(area.x + area.w / 4),
            "y": round(area.y + area.h / 4),
            "w": round(w),
            "h": round(h),
            "text": tag,
        }
        return [
            {"_type": "create", "intent": "the box of my part", "shape": shape},
            {"_type": "message", "text": f"Drew the box for {tag}."},
        ]
