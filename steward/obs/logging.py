"""structlog setup: JSON lines in services, readable output on a terminal."""

from __future__ import annotations

import logging
import sys
from typing import Any

import structlog

from steward.obs.redaction import Redactor


def configure_logging(level: str = "info", fmt: str = "auto", debug_payloads: bool = False) -> None:
    use_console = fmt == "console" or (fmt == "auto" and sys.stderr.isatty())
    processors: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        Redactor(enabled=not debug_payloads),
        structlog.processors.format_exc_info,
        structlog.dev.ConsoleRenderer() if use_console else structlog.processors.JSONRenderer(),
    ]
    structlog.configure(
        processors=processors,
        wrapper_class=structlog.make_filtering_bound_logger(
            getattr(logging, level.upper(), logging.INFO)
        ),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )
    # The LiveKit SDK logs through stdlib logging; keep it quiet unless debugging.
    logging.basicConfig(level=logging.WARNING if level != "debug" else logging.DEBUG)


def get_logger(name: str) -> Any:
    return structlog.get_logger(name)
