"""docker-compose.yml cannot run here (no Docker engine); check it matches the settings."""

from __future__ import annotations

import re

import yaml

from steward.config import PROJECT_ROOT, Settings
from steward_tools.livekit_server import LIVEKIT_VERSION

COMPOSE = PROJECT_ROOT / "docker-compose.yml"


def _compose() -> dict:  # type: ignore[type-arg]
    return yaml.safe_load(COMPOSE.read_text())


def test_services_present() -> None:
    services = _compose()["services"]
    assert {"livekit", "postgres", "steward", "demo"} <= set(services)
    assert services["livekit"]["image"].endswith(":" + LIVEKIT_VERSION)


def test_steward_environment_names_are_settings_fields() -> None:
    env = _compose()["services"]["steward"]["environment"]
    names = set(env) if isinstance(env, dict) else {e.split("=", 1)[0] for e in env}
    fields = {f.upper() for f in Settings.model_fields}
    unknown = names - fields
    assert not unknown, f"compose sets variables the steward does not read: {unknown}"
    assert {"LIVEKIT_URL", "LIVEKIT_API_KEY", "LIVEKIT_API_SECRET", "DATABASE_URL"} <= names


def test_ports_match_settings_defaults() -> None:
    services = _compose()["services"]
    steward_ports = [str(p) for p in services["steward"]["ports"]]
    port = Settings.model_fields["steward_http_port"].default
    assert any(p.endswith(f":{port}") for p in steward_ports)
    lk_ports = [str(p) for p in services["livekit"]["ports"]]
    assert any(re.search(r":7880$", p) for p in lk_ports)
    url = services["steward"]["environment"]["LIVEKIT_URL"]
    assert url.startswith("ws://livekit:7880")
