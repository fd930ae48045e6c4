"""A semantic mistake by the model (unknown task, directing itself, …): not a crash.

Raised by pure fairy logic; the fairy runtime turns it into feedback for the model through
an interrupt, so the model can correct itself on its next turn.
"""

from __future__ import annotations


class FairyMistake(Exception):
    """A rule of the fairy actions broken by the model; `feedback` is what it is told so it can
    correct itself."""

    def __init__(self, feedback: str) -> None:
        super().__init__(feedback)
        self.feedback = feedback
