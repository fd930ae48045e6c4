"""The prefilled opening of a response, for models that write it themselves.

A provider that could not send the prefill (or has none to send) gets the opening back from
the model, perhaps spaced differently or inside a ```json fence; callers expect the text after
it, as if the prefill had been sent.
"""

from __future__ import annotations

import re

_NO_SPACE = re.compile(r"\s+")


class Opening:
    """Drops the model's own copy of the prefill (spaces ignored, a ```json fence allowed)
    from the start of a stream, so the text reads as if it followed the prefill."""

    def __init__(self, prefill: str) -> None:
        self._target = _NO_SPACE.sub("", prefill)
        self._forms = (self._target, "```json" + self._target, "```" + self._target)
        self._held = ""
        self._done = not self._target

    def strip(self, text: str) -> str:
        if self._done:
            return text
        self._held += text
        squeezed = _NO_SPACE.sub("", self._held)
        for form in self._forms:
            if squeezed.startswith(form):
                self._done = True
                # Cut after the character that completes the opening.
                seen = 0
                for i, ch in enumerate(self._held):
                    if not ch.isspace():
                        seen += 1
                        if seen == len(form):
                            rest, self._held = self._held[i + 1 :], ""
                            return rest
        if any(form.startswith(squeezed) for form in self._forms):
            return ""  # could still be the opening: hold it
        return self.flush()

    def flush(self) -> str:
        self._done = True
        held, self._held = self._held, ""
        return held
