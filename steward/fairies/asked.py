"""What a request's prompt says beside its text: a one-shot prompt's bounds, selection,
asker, model, mode, shape cap and clock (`OneShotJob.asked`); a crew request says none of it
(`CREW_ASKED`), and the request builder reads it the same way for both."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from steward.fairies.modes import ModeDefinition
from steward.ports import PromptChannel
from steward.protocol.box import Box

# The cap on blurry shapes of a request nobody set one for (the settings' default).
DEFAULT_BLURRY_CAP = 300


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class Asked:
    """What a prompt says about its request beyond the text: area, selection, asker, channel, model,
    mode, shape cap and clock."""

    bounds: Box | None = None
    selection: tuple[str, ...] = ()
    asker: str | None = None
    # How the prompt's words came (panel, lk.chat, voice, HTTP): the request says so.
    channel: PromptChannel | None = None
    model_spec: str | None = None  # the model its words name (None: the run's provider's)
    mode: ModeDefinition | None = None  # None: the fairy's own mode
    blurry_cap: int = DEFAULT_BLURRY_CAP
    clock: Callable[[], datetime] = _now


CREW_ASKED = Asked()
