"""Packing actions into envelopes of at most 15 KiB (split, never drop), and envelopes into
packets.

Actions are grouped greedily in order. One action whose own JSON exceeds the limit is cut
into fragments: the same id and name, with `params = {"_fragment": {index, count, data}}`
where the `data` pieces concatenate to the JSON text of the real params. A client buffers
the fragments (they arrive in seq order) and applies the action once the last one is in.
"""

from __future__ import annotations

import json
from typing import Any

from steward.protocol.limits import (
    MAX_ACTIONS_PER_ENVELOPE,
    MAX_BATCH_BYTES,
    MAX_ENVELOPE_BYTES,
    MAX_ENVELOPES_PER_BATCH,
)
from steward.protocol.messages import ActionEnvelope, WireAction
from steward.protocol.names import TOPIC_ACTIONS

FRAGMENT_KEY = "_fragment"
# Serialisation of the largest seq and a long timestamp, so a packed group always fits.
_WORST_SEQ = 2**31 - 1
_WORST_TS = 9_999_999_999.999999


def _envelope(session_id: str, actions: list[WireAction], partial: bool) -> ActionEnvelope:
    return ActionEnvelope(
        session_id=session_id,
        seq=_WORST_SEQ,
        partial=partial or None,
        actions=actions,
        ts=_WORST_TS,
    )


def _size(action: WireAction) -> int:
    return len(action.to_wire())


def fragment_action(action: WireAction, budget: int) -> list[WireAction]:
    """Cut one oversized action into fragments whose serialisations fit in `budget` bytes."""
    text = json.dumps(action.params, separators=(",", ":"), ensure_ascii=False)
    shell = _size(
        WireAction(
            id=action.id,
            name=action.name,
            params={FRAGMENT_KEY: {"index": 999_999, "count": 999_999, "data": ""}},
        )
    )
    room = budget - shell
    if room < 64:
        raise ValueError(f"envelope budget {budget} too small for a fragment")
    pieces: list[str] = []
    pos = 0
    while pos < len(text):
        n = room
        # Escaping can grow a piece (quotes, control chars, multi-byte UTF-8): shrink to fit.
        while len(json.dumps(text[pos : pos + n], ensure_ascii=False).encode()) > room:
            n = max(1, n * 3 // 4)
        pieces.append(text[pos : pos + n])
        pos += n
    return [
        WireAction(
            id=action.id,
            name=action.name,
            params={FRAGMENT_KEY: {"index": i, "count": len(pieces), "data": piece}},
        )
        for i, piece in enumerate(pieces)
    ]


def pack(
    session_id: str,
    actions: list[WireAction],
    *,
    partial: bool = False,
    max_bytes: int = MAX_ENVELOPE_BYTES,
    max_actions: int = MAX_ACTIONS_PER_ENVELOPE,
) -> list[list[WireAction]]:
    """Groups of actions, in order, each fitting one envelope of at most `max_bytes`."""
    # The common case, one encode: all of them fit one envelope (what the greedy fill gives).
    if len(actions) <= max_actions:
        if len(_envelope(session_id, actions, partial).to_wire()) <= max_bytes:
            return [actions] if actions else []
    base = len(_envelope(session_id, [], partial).to_wire())  # ends with `"actions":[]...`
    budget = max_bytes - base
    groups: list[list[WireAction]] = []
    current: list[WireAction] = []
    used = 0
    for action in actions:
        size = _size(action)
        if size > budget:
            if current:
                groups.append(current)
                current, used = [], 0
            groups.extend([frag] for frag in fragment_action(action, budget))
            continue
        extra = size + (1 if current else 0)  # a comma between array items
        if current and (used + extra > budget or len(current) >= max_actions):
            groups.append(current)
            current, used, extra = [], 0, size
        current.append(action)
        used += extra
    if current:
        groups.append(current)
    return groups


def is_fragment(params: dict[str, Any]) -> bool:
    return FRAGMENT_KEY in params and len(params) == 1


class FragmentAssembler:
    """Client side: collects fragments per action id; returns full params when complete."""

    def __init__(self) -> None:
        self._parts: dict[str, list[str]] = {}

    def add(self, action_id: str, params: dict[str, Any]) -> dict[str, Any] | None:
        frag = params[FRAGMENT_KEY]
        index, count, data = int(frag["index"]), int(frag["count"]), str(frag["data"])
        if index == 0:
            self._parts[action_id] = []
        parts = self._parts.setdefault(action_id, [])
        if index != len(parts):
            # Out of order within one action cannot happen after the gap buffer; restart.
            self._parts.pop(action_id, None)
            return None
        parts.append(data)
        if index + 1 < count:
            return None
        del self._parts[action_id]
        full = json.loads("".join(parts))
        if not isinstance(full, dict):
            raise ValueError("fragmented params are not an object")
        return full


def frames(payloads: list[bytes], max_bytes: int = MAX_BATCH_BYTES) -> list[tuple[int, int, bytes]]:
    """Encoded envelopes, in order, as packets of at most `max_bytes`: (start, end, frame)
    where payloads[start:end] travel in `frame`. A run of one is the envelope itself (for
    `agent:action`); longer runs are an `EnvelopeBatch` (for `agent:actions`), built by
    joining the envelopes' bytes, so each is encoded once for every packet it travels in."""
    out: list[tuple[int, int, bytes]] = []
    start, size = 0, _BATCH_SHELL
    for i, payload in enumerate(payloads):
        extra = len(payload) + (1 if i > start else 0)
        if i > start and (size + extra > max_bytes or i - start >= MAX_ENVELOPES_PER_BATCH):
            out.append(_frame(payloads, start, i))
            start, size, extra = i, _BATCH_SHELL, len(payload)
        size += extra
    if payloads:
        out.append(_frame(payloads, start, len(payloads)))
    return out


_BATCH_HEAD = b'{"envelopes":['
_BATCH_SHELL = len(_BATCH_HEAD) + 2  # and `]}`


def _frame(payloads: list[bytes], start: int, end: int) -> tuple[int, int, bytes]:
    if end - start == 1:
        return start, end, payloads[start]
    return start, end, _BATCH_HEAD + b",".join(payloads[start:end]) + b"]}"


def envelopes_in(topic: str, packet: bytes) -> list[dict[str, Any]]:
    """The envelopes an `agent:action` or `agent:actions` packet carries, as JSON objects."""
    body = json.loads(packet)
    if topic == TOPIC_ACTIONS:
        return list(body["envelopes"])
    return [body]
