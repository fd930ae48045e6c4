"""Wait conditions: a fairy waits for events, and an event wakes whoever waits for it.

Events are keys: ``task-completed:<task id>`` and ``agent-mode-transition:<agent>:<mode>``.
A notification removes the matching conditions and returns one `Wake` per waiter; the
runtime queues it as a request of the waiter (behind its turn in progress, if any).
Conditions are persisted so a restart keeps them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from steward.fairies.projects import task_completed_key


def mode_transition_key(fairy_id: str, mode: str) -> str:
    return f"agent-mode-transition:{fairy_id}:{mode}"


__all__ = [
    "WaitBoard",
    "WaitCondition",
    "Wake",
    "mode_transition_key",
    "task_completed_key",
]


@dataclass(frozen=True)
class WaitCondition:
    """One fairy waiting for one event key, with the message it is told when the event happens."""

    fairy_id: str
    key: str
    message: str  # what the waiter is told when the event happens


@dataclass(frozen=True)
class Wake:
    """A waiting fairy to wake: the event key that woke it and the message it is told."""

    fairy_id: str
    key: str
    message: str


@dataclass
class WaitBoard:
    """Every wait of a room's fairies: adds them, and turns an event into the wakes it causes."""

    conditions: list[WaitCondition] = field(default_factory=list)

    def wait(self, fairy_id: str, keys_and_messages: list[tuple[str, str]]) -> list[WaitCondition]:
        """Add conditions (duplicates of an existing (fairy, key) are ignored)."""
        have = {(c.fairy_id, c.key) for c in self.conditions}
        added = [
            WaitCondition(fairy_id, key, msg)
            for key, msg in keys_and_messages
            if (fairy_id, key) not in have
        ]
        self.conditions.extend(added)
        return added

    def notify(self, key: str) -> list[Wake]:
        fulfilled = [c for c in self.conditions if c.key == key]
        if not fulfilled:
            return []
        self.conditions = [c for c in self.conditions if c.key != key]
        return [Wake(c.fairy_id, c.key, c.message) for c in fulfilled]

    def waiting_on(self, fairy_id: str) -> list[WaitCondition]:
        return [c for c in self.conditions if c.fairy_id == fairy_id]

    def clear(self, fairy_id: str) -> list[WaitCondition]:
        gone = self.waiting_on(fairy_id)
        self.conditions = [c for c in self.conditions if c.fairy_id != fairy_id]
        return gone

    def load(self, conditions: list[WaitCondition]) -> None:
        self.conditions = list(conditions)
