"""Notes on an agent's actions (dropped fields, missing shapes, renamed ids, cut actions),
held from the request that produced them until the agent's next prompt shows them."""

from __future__ import annotations

from dataclasses import dataclass, field

# Per agent: the model needs the recent ones, not a run's whole story.
MAX_NOTES_KEPT = 40


@dataclass
class NoteCarry:
    """Pending notes per agent key (a room for the one-shot agent, a fairy for fairies)."""

    _pending: dict[str, list[str]] = field(default_factory=dict)

    def take(self, key: str) -> list[str]:
        """The notes not shown yet; they are shown once."""
        return self._pending.pop(key, [])

    def keep(self, key: str, notes: list[str]) -> None:
        if notes:
            pending = self._pending.setdefault(key, [])
            pending += notes
            del pending[:-MAX_NOTES_KEPT]
