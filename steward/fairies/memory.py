"""Memory-levelled history: every item a fairy remembers carries the level it was made at.

The current mode's memory level decides what the model sees (`filter_history`):
- ``fairy``   → only fairy-level items (long-term: requests, summaries of finished work);
- ``project`` → project-level items, newest first, skipping task items and stopping at the
  first fairy item (the project began there);
- ``task``    → the trailing run of task items (everything before the task began is hidden).

At the end of a task or a project, a memory-transition item plus a self prompt summarise
what the filter will hide from now on (`task_end_items`, `project_end_items`).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from steward.actions.registry import ACTIONS
from steward.prompt.parts.chat_history import render_action
from steward.prompt.state import ChatItem

MemoryLevel = Literal["fairy", "project", "task"]
MEMORY_LEVELS: tuple[MemoryLevel, ...] = ("fairy", "project", "task")

# prompt: a request (from a user, the system or the fairy itself); action: something the
# fairy did; feedback: a correction sent back to the model; memory-transition: a summary.
HistoryKind = Literal["prompt", "action", "feedback", "memory-transition"]
PromptOrigin = Literal["user", "system", "self", "fairy"]
# A feedback item that says how a run ended without its answer (timed out, failed, stopped).
RunEnd = Literal["run-end"]
RUN_END: RunEnd = "run-end"
ItemOrigin = PromptOrigin | RunEnd

TASK_SUMMARY = "[ACTIONS]: <task actions filtered for brevity>"
PROJECT_SUMMARY = "[ACTIONS]: <project actions filtered for brevity>"

# Rough token estimate (≈ 4 characters per token), the same everywhere we report figures.
CHARS_PER_TOKEN = 4


def new_item_id() -> str:
    return uuid.uuid4().hex[:16]


@dataclass(frozen=True)
class HistoryItem:
    """One thing a fairy remembers (a prompt, an action, a summary), with the memory level it was
    made at."""

    kind: HistoryKind
    memory_level: MemoryLevel
    text: str  # what the model reads
    id: str = field(default_factory=new_item_id)
    origin: ItemOrigin | None = None  # prompts, and a run's end
    action: dict[str, Any] | None = None  # actions only: {name, params}
    user_text: str | None = None  # what a person would be shown, when different
    run: str | None = None  # the run (session id) it belongs to, when kept per run
    # A person's prompt: who wrote it (participant identity), so a later request names them.
    asker: str | None = None
    # When it was made (epoch seconds): orders the runs of several askers. Not part of an
    # item's identity (Postgres keeps it to the microsecond).
    created: float = field(default_factory=time.time, compare=False)

    def model_text(self) -> str:
        """What the model reads: an action as it wrote it (the response format)."""
        if self.kind == "action" and self.action is not None:
            return render_action(self.written())
        return self.text

    def written(self) -> dict[str, Any]:
        """An action item's action as the model writes it: {"_type": name, ...fields}."""
        assert self.action is not None
        params = self.action.get("params") or {}
        return {**params, "_type": self.action.get("name", self.text)}


def chat_items(
    items: Sequence[HistoryItem], level: MemoryLevel, who: str | None = None
) -> list[ChatItem]:
    """A fairy's remembered items for the chat_history part: actions in the response
    format (the part groups and bounds them), the plan and the first user request pinned.
    `who`: the participant the fairy works for, so the part can tell askers' runs apart."""
    first_user = next((i for i in items if i.kind == "prompt" and i.origin == "user"), None)
    out: list[ChatItem] = []
    for i in items:
        if i.kind == "action" and i.action is not None:
            name = str(i.action.get("name", i.text))
            act = i.written()
            spec = ACTIONS.get(name)
            said = spec.chat(act) if spec is not None and spec.chat is not None else name
            pinned = spec is not None and spec.plans  # the plan: in full however long
            out.append(
                ChatItem("assistant", said, level, action=act, who=who, run=i.run, pinned=pinned)
            )
        elif i.kind == "prompt":
            # A self prompt is the fairy's own note ("I just finished the task").
            role: Literal["user", "assistant", "system"] = (
                "user" if i.origin == "user" else "assistant" if i.origin == "self" else "system"
            )
            by = (i.asker or who) if role == "user" else None
            out.append(
                ChatItem(
                    role, i.text, level, who=who, run=i.run, pinned=i is first_user, asked_by=by
                )
            )
        elif i.kind == "feedback":
            ended = i.origin == RUN_END
            out.append(ChatItem("system", i.text, level, who=who, run=i.run, ended=ended))
        else:  # a memory transition: what the filter hides from now on, said in words
            what = "project" if i.text == PROJECT_SUMMARY else "task"
            said = f"The {what}'s actions are left out from here on; the next line sums it up."
            out.append(ChatItem("system", said, level, who=who, run=i.run))
    return out


def filter_history(items: Sequence[HistoryItem], level: MemoryLevel) -> list[HistoryItem]:
    """The items a fairy whose mode has memory `level` may see, oldest first."""
    if level == "fairy":
        return [i for i in items if i.memory_level == "fairy"]
    picked: list[HistoryItem] = []
    for item in reversed(items):
        if level == "project":
            if item.memory_level == "project":
                picked.append(item)
            elif item.memory_level == "fairy":
                break
            # task items are skipped
        else:
            if item.memory_level != "task":
                break
            picked.append(item)
    picked.reverse()
    return picked


def history_tokens(items: Iterable[HistoryItem]) -> int:
    """About how many tokens the model reads for these history items."""
    chars = sum(len(i.model_text()) for i in items)
    return (chars + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def prompt_item(
    text: str, level: MemoryLevel, origin: PromptOrigin, asker: str | None = None
) -> HistoryItem:
    """A request; `asker`: the person who wrote it (a user's prompt only)."""
    who = asker if origin == "user" else None
    return HistoryItem(kind="prompt", memory_level=level, text=text, origin=origin, asker=who)


def action_item(name: str, params: dict[str, Any], level: MemoryLevel) -> HistoryItem:
    return HistoryItem(
        kind="action", memory_level=level, text=name, action={"name": name, "params": params}
    )


def feedback_item(text: str, level: MemoryLevel) -> HistoryItem:
    return HistoryItem(kind="feedback", memory_level=level, text=text, origin="system")


def run_end_item(
    asker: str | None, how: str, changes: int, level: MemoryLevel, run: str | None = None
) -> HistoryItem:
    """How a run ended without its answer, for every later request: "alice's request timed
    out; nothing was drawn", so no model takes it for done nor owes it. `changes`: the
    canvas actions it applied before it ended (they stay, and its lines list them)."""
    whose = f"{asker}'s request" if asker else "The request"
    drawn = (
        "nothing was drawn"
        if not changes
        else f"only the {changes} change(s) listed before this were made"
    )
    return HistoryItem(
        kind="feedback",
        memory_level=level,
        text=f"{whose} {how}; {drawn}.",
        origin=RUN_END,
        run=run,
    )


def canvas_changes(items: Iterable[HistoryItem]) -> int:
    """How many of these items are canvas actions (what a run changed on the canvas)."""
    return sum(
        1
        for i in items
        if i.kind == "action"
        and i.action is not None
        and (spec := ACTIONS.get(str(i.action.get("name")))) is not None
        and spec.kind == "canvas"
    )


def task_end_items(
    task_id: str, title: str, description: str, *, level: MemoryLevel = "fairy"
) -> list[HistoryItem]:
    """After a task: the detail is hidden from now on; say so, then say what was done.

    `level` is the memory level the fairy returns to (fairy for solo work, project for a
    drone or a duo orchestrator that goes back to its project)."""
    return [
        HistoryItem(kind="memory-transition", memory_level=level, text=TASK_SUMMARY),
        prompt_item(
            f'I just finished the task "{task_id}" ({title}): {description}',
            level,
            "self",
        ),
    ]


def project_end_items(title: str, members: Sequence[str], *, led: bool) -> list[HistoryItem]:
    others = ", ".join(members) if members else "no one else"
    what = (
        f'I led and completed the "{title}" project with {len(members)} other fairy(s): {others}'
        if led
        else f'I worked on the "{title}" project, which is now complete.'
    )
    return [
        HistoryItem(kind="memory-transition", memory_level="fairy", text=PROJECT_SUMMARY),
        prompt_item(what, "fairy", "self"),
    ]
