"""Screenshot image types the steward accepts on `agent:screenshot`.

The stream's mimeType names the type; the bytes must start with that type's signature, since
the model provider refuses an image whose bytes do not match its declared media type.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from steward.protocol.names import SCREENSHOT_TYPE_JPEG, SCREENSHOT_TYPE_WEBP


def _is_jpeg(data: bytes) -> bool:
    return data[:2] == b"\xff\xd8"  # SOI


def _is_webp(data: bytes) -> bool:
    return len(data) >= 12 and data[:4] == b"RIFF" and data[8:12] == b"WEBP"


# media type → signature check; the only image types a screenshot may be.
SCREENSHOT_TYPES: Final[dict[str, Callable[[bytes], bool]]] = {
    SCREENSHOT_TYPE_JPEG: _is_jpeg,
    SCREENSHOT_TYPE_WEBP: _is_webp,
}


def screenshot_type(mime_type: str) -> str | None:
    """The accepted media type a stream's mimeType names (parameters and case ignored)."""
    base = mime_type.split(";", 1)[0].strip().lower()
    return base if base in SCREENSHOT_TYPES else None


def matches(media_type: str, data: bytes) -> bool:
    """True when `data` starts with the signature of the accepted `media_type`."""
    check = SCREENSHOT_TYPES.get(media_type)
    return check is not None and check(data)


def sniff(data: bytes) -> str | None:
    """The accepted media type whose signature `data` starts with, if any."""
    return next((t for t, check in SCREENSHOT_TYPES.items() if check(data)), None)
