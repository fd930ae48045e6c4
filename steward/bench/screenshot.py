"""screenshot_ms: the round trip of a 1,000-shape canvas screenshot at 1280x800 in Chromium.

Not measured yet: it needs the client-bridge demo page driven by Chromium (playwright-core in
client-bridge). Until then the figure is reported as null with the reason, never estimated.
"""

from __future__ import annotations

from typing import Any


async def screenshot_ms() -> dict[str, Any]:
    return {
        "screenshot_ms": None,
        "screenshot_reason": "not measured: needs the client-bridge page in Chromium "
        "(editor.toImage of 1,000 shapes at 1280x800); not wired into the benchmark yet",
    }
