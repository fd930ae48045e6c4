"""Keeps prompt text and image bytes out of logs unless payload debugging is on."""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

# Log keys whose values are user content.
SENSITIVE_KEYS = frozenset(
    {"prompt", "message", "text", "transcript", "image", "screenshot", "jpeg", "content"}
)


def _redact(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return f"<{len(value)} bytes redacted>"
    if isinstance(value, str):
        return f"<{len(value)} chars redacted>"
    return "<redacted>"


class Redactor:
    """structlog processor: replaces sensitive values by their size."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(
        self, _logger: Any, _method: str, event: MutableMapping[str, Any]
    ) -> MutableMapping[str, Any]:
        for key, value in list(event.items()):
            if isinstance(value, (bytes, bytearray, memoryview)):
                event[key] = f"<{len(value)} bytes>"  # never dump raw bytes, even in debug
            elif self.enabled and key in SENSITIVE_KEYS:
                event[key] = _redact(value)
        return event
