"""An embedded real PostgreSQL (PyPI `pgserver`) for dev and tests when DATABASE_URL is unset."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pgserver
from tenacity import retry, retry_if_exception_type, stop_after_delay, wait_fixed


class EmbeddedPostgres:
    """Starts (or reuses) a PostgreSQL server on a unix socket in `data_dir`."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self._server: Any = None

    # A start right after a stop can find the old postmaster still listed but not `ready`
    # (pgserver then fails an assertion rather than wait): try again until it has gone.
    @retry(
        retry=retry_if_exception_type(AssertionError),
        stop=stop_after_delay(20),
        wait=wait_fixed(0.5),
        reraise=True,
    )
    def start(self) -> str:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        get_server = pgserver.get_server  # type: ignore[attr-defined]
        self._server = get_server(self.data_dir, cleanup_mode="stop")
        return str(self._server.get_uri())

    async def astart(self) -> str:
        return await asyncio.to_thread(self.start)

    def stop(self) -> None:
        if self._server is not None:
            self._server.cleanup()
            self._server = None
