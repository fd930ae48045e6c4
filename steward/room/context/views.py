"""What each participant is looking at: the viewport and selection browsers publish on
`canvas:viewport` (at most every 80 ms).

A prompt's context is the asker's. When the asker's own browser cannot answer a context
request, the host renders the asker's last published viewport instead, and the asker's
last published selection stands for what "this" means.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from steward.protocol.box import Box
from steward.protocol.messages import ViewportUpdate


@dataclass(frozen=True)
class ParticipantView:
    """What one participant last said it looks at: viewport, selection and when."""

    viewport: Box
    selection: tuple[str, ...]
    at: float  # monotonic time of the update


class Views:
    """The latest view per participant; forgotten when the participant leaves."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._views: dict[str, ParticipantView] = {}

    def update(self, identity: str, update: ViewportUpdate) -> ParticipantView:
        view = ParticipantView(update.viewport, tuple(update.selection), self._clock())
        self._views[identity] = view
        return view

    def get(self, identity: str | None) -> ParticipantView | None:
        return self._views.get(identity) if identity else None

    def forget(self, identity: str) -> None:
        self._views.pop(identity, None)

    def __len__(self) -> int:
        return len(self._views)
