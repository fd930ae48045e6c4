"""What a run is told about its own previous request, in its next request only.

Two things: the steward's notes on the request's actions (dropped fields, missing shapes,
renamed ids, cut actions) and the canvas problems the shapes it drew or changed cause (the
quality report's lints). Both are held per run, keyed by its session id, and shown once:
never to another run, another fairy or another user's request in the same room. Lints are
read off the canvas when the next request is built, so problems fixed meanwhile (by anyone)
are not told; the run's own created shapes are passed along so that overlaps among them that
form one drawing are not flagged (`steward.canvas.quality._unintended`).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from steward.canvas.quality import RunShapes, quality_report

# Per run: the model needs the recent notes, not a run's whole story.
MAX_NOTES_KEPT = 40
# Runs with something held; a run that ended without another request is forgotten
# oldest-first, so nothing grows with the number of runs.
MAX_RUNS_KEPT = 256


@dataclass
class _Held:
    notes: list[str] = field(default_factory=list)
    touched: list[str] = field(default_factory=list)  # since the last request was built
    created: list[str] = field(default_factory=list)  # over the whole run


@dataclass
class RunFeedback:
    """Notes and lints per run, from the request that produced them to the run's next."""

    _runs: OrderedDict[str, _Held] = field(default_factory=OrderedDict)

    def keep(self, run: str, notes: Iterable[str], drawn: RunShapes | None = None) -> None:
        """After a request of `run`: its notes, and the shapes it made or changed."""
        held = self._runs.pop(run, None) or _Held()
        self._runs[run] = held  # most recently used last
        held.notes += notes
        del held.notes[:-MAX_NOTES_KEPT]
        if drawn is not None:
            held.touched += [i for i in drawn.touched if i not in held.touched]
            held.created += [i for i in drawn.created if i not in held.created]
        while len(self._runs) > MAX_RUNS_KEPT:
            self._runs.popitem(last=False)

    def take(
        self, run: str, shapes: Mapping[str, Mapping[str, Any]]
    ) -> tuple[list[str], list[str]]:
        """(notes, lints) for the request of `run` being built; each is told once."""
        held = self._runs.get(run)
        if held is None:
            return [], []
        notes, held.notes = held.notes, []
        touched, held.touched = held.touched, []
        if not touched:
            return notes, []
        report = quality_report(shapes, touched=touched, created=held.created)
        return notes, report.lints()

    def end(self, run: str) -> None:
        self._runs.pop(run, None)
