"""What every subcommand starts with (settings and logging) and how it prints JSON."""

from __future__ import annotations

import json
import sys
from typing import Any

from steward.config import Settings, get_settings
from steward.obs.logging import configure_logging


def setup(settings: Settings | None = None) -> Settings:
    settings = settings or get_settings()
    configure_logging(
        settings.steward_log_level, settings.steward_log_format, settings.steward_debug_payloads
    )
    return settings


def print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n")
    sys.stdout.flush()
