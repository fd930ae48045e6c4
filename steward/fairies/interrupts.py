"""Interrupts: cancel what a fairy is doing, optionally switch its mode, optionally give it
new input — in that order, always.

Who may interrupt: the fairy itself and the system always can (task done, project
aborted or disbanded, feedback on a mistake). A user cannot cancel an orchestrator while its
project is active (the mode's `on_prompt_cancel` refuses); a user's new prompt to such an
orchestrator is queued for its next turn instead of cancelling the current one.
"""

from __future__ import annotations

from dataclasses import dataclass

from steward.fairies.modes import CancelSource, ModeFacts, ModeName, mode


@dataclass(frozen=True)
class Interrupt:
    """A request to stop a fairy: who asks, and optionally a mode to switch to and new input."""

    source: CancelSource
    mode: ModeName | None = None
    input: str | None = None  # None: stop without new work


@dataclass(frozen=True)
class InterruptDecision:
    """What an interrupt comes to: cancel or not, the mode to switch to, what to schedule, and why a
    cancel was refused."""

    cancel: bool  # cancel the turn in flight
    switch_to: ModeName | None
    schedule: str | None
    refused: str | None = None  # why the cancel part was refused (input is still queued)


def decide(current: ModeName, facts: ModeFacts, interrupt: Interrupt) -> InterruptDecision:
    check = mode(current).on_prompt_cancel(
        ModeFacts(**{**facts.__dict__, "cancel_source": interrupt.source})
    )
    if check.refuse is not None:
        # Keep going; a user's words still reach the fairy on its next turn.
        return InterruptDecision(False, None, interrupt.input, refused=check.refuse)
    target = interrupt.mode if interrupt.mode is not None else check.mode
    return InterruptDecision(True, target, interrupt.input)


def feedback(text: str) -> Interrupt:
    """A semantic mistake goes back to the model: cancel the turn, tell it what was wrong."""
    return Interrupt(source="system", input=f"Feedback on your last action: {text}")
