"""Wheel build hook: the SQL migrations ship inside the package (steward/store/migrate.py
finds them there). Not in editable installs, which read the checkout's own migrations/."""

from __future__ import annotations

from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class MigrationsHook(BuildHookInterface):
    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if version == "standard":
            build_data["force_include"]["migrations"] = "steward/store/migrations"
