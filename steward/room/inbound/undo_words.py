"""Words that are commands: "undo" and "redo", typed or spoken, take back (or do again) the
asker's last run as the panel's undo button does, and never reach a model.

Which run is the asker's last is read off the room's conversation (its prompts, in room
order, each revert's naming the run it takes back), so it holds across reloads and restarts
as far back as the conversation keeps.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Literal

from steward.store.conversation import ConversationItem

Command = Literal["undo", "redo"]

# What a person types or says (lower case, punctuation dropped, "please" ignored).
_WORDS: dict[str, Command] = {
    "undo": "undo",
    "undo that": "undo",
    "undo it": "undo",
    "undo this": "undo",
    "undo the last one": "undo",
    "redo": "redo",
    "redo that": "redo",
    "redo it": "redo",
    "redo this": "redo",
}
# Earlier runs an "undo" tries when the last changed nothing on the canvas.
MAX_TRIED = 5


def command_of(text: str) -> Command | None:
    """The command `text` is, or None (a prompt for the model)."""
    words = re.sub(r"[^\w\s']", " ", text.lower()).split()
    words = [w for w in words if w != "please"]
    return _WORDS.get(" ".join(words))


@dataclass(frozen=True)
class AskedRun:
    """A run as the conversation shows it: who asked, what, the run a revert takes back, and
    whether fairies' own runs followed it before the next prompt (a project: what it drew is
    theirs, so an "undo" that finds nothing in the prompt's own run stops there)."""

    session_id: str
    asker: str
    text: str
    reverts: str | None = None
    helped: bool = False


def asked_runs(items: Iterable[ConversationItem]) -> list[AskedRun]:
    """The prompted runs of a room's conversation (`items` in room order)."""
    runs: list[AskedRun] = []
    prompted: set[str] = set()
    for item in items:
        p = item.payload
        if item.kind == "prompt":
            prompted.add(item.session_id)
            reverts = p.get("reverts")
            runs.append(
                AskedRun(
                    item.session_id,
                    str(p.get("asker", "")),
                    str(p.get("text", "")),
                    reverts if isinstance(reverts, str) else None,
                )
            )
        elif runs and p.get("fairy") and item.session_id not in prompted and not runs[-1].helped:
            runs[-1] = replace(runs[-1], helped=True)
    return runs


def _taken_back(runs: list[AskedRun]) -> dict[str, bool]:
    """Whether each run is taken back now: some revert of it is itself in effect (not taken
    back). Reverts come after what they take back, so one pass from the newest settles it."""
    reverts_of: dict[str, list[str]] = {}
    for run in runs:
        if run.reverts is not None:
            reverts_of.setdefault(run.reverts, []).append(run.session_id)
    taken: dict[str, bool] = {}
    for run in reversed(runs):
        taken[run.session_id] = any(
            not taken.get(r, False) for r in reverts_of.get(run.session_id, [])
        )
    return taken


def targets(runs: Iterable[AskedRun], asker: str, command: Command) -> list[AskedRun]:
    """The runs `command` of `asker` would take back, the likeliest first.

    undo: the asker's own prompted runs (not reverts) still in effect, newest first.
    redo: the asker's undos still in effect (reverts of a prompted run), newest first;
    taking one back does again what it took back.
    """
    ordered = list(runs)
    by_id = {r.session_id: r for r in ordered}
    taken = _taken_back(ordered)
    out: list[AskedRun] = []
    for run in reversed(ordered):
        if run.asker != asker or taken.get(run.session_id, False):
            continue
        if command == "undo" and run.reverts is None:
            out.append(run)
        elif command == "redo" and run.reverts is not None:
            target = by_id.get(run.reverts)
            if target is None or target.reverts is None:  # an undo, not a redo
                out.append(run)
    return out[:MAX_TRIED] if command == "undo" else out[:1]
