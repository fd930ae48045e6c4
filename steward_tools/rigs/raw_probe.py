"""The raw probe packets `bench latency` sends beside its actions, as the client rig reads and
echoes them: no steward logic handles them, so their delivery time is LiveKit's alone."""

from __future__ import annotations

import json
from typing import Any

from steward.protocol.messages import Ack

RAW_TOPIC = "bench:raw"  # shaped like the protocol's topics; no client logic handles it


# An echo is the size of a client's ack of one envelope.
ECHO_BYTES = len(
    Ack(session_id="s" * 32, seq=100, applied=["shape:" + "x" * 21], applied_at=1.8e9).to_wire()
)


def probe_payload(probe_id: str, size: int, *, echo: bool = False) -> bytes:
    """A JSON packet of `size` bytes (at least its id) carrying `probe_id`; with `echo`
    the client answers it (`echo_payload`)."""
    head: dict[str, Any] = {"probe": probe_id, "echo": 1} if echo else {"probe": probe_id}
    bare = json.dumps({**head, "pad": ""})
    return json.dumps({**head, "pad": "x" * max(0, size - len(bare))}).encode()


def echo_payload(probe_id: str) -> bytes:
    return probe_payload(probe_id, ECHO_BYTES)


def _probe(payload: bytes) -> dict[str, Any]:
    try:
        value = json.loads(payload)
    except ValueError:
        return {}
    return value if isinstance(value, dict) and isinstance(value.get("probe"), str) else {}


def probe_id(payload: bytes) -> str | None:
    return _probe(payload).get("probe")


def echo_wanted(payload: bytes) -> str | None:
    """The probe id when the packet asks the client for an echo."""
    probe = _probe(payload)
    return probe.get("probe") if probe.get("echo") else None
