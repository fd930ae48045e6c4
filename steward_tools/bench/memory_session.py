"""An in-memory `SessionPort` whose 'browser' applies what the agent sends, as clients do.

Every batch of actions is packed into envelopes with the broadcaster's packer, encoded,
decoded back with the protocol decoder and applied to a client `CanvasMirror`, so anything the
agent lets escape (an invalid op, an oversize envelope, an op the client cannot apply)
raises here instead of in a browser.
"""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from steward.canvas.mirror import CanvasMirror
from steward.model.base import ModelRequest, Usage
from steward.ports import CanvasSnapshot, Picture
from steward.protocol import ProtocolError, decode
from steward.protocol.limits import MAX_ENVELOPE_BYTES
from steward.protocol.messages import ActionEnvelope, Box, SessionStatus, WireAction
from steward.room.envelopes import FragmentAssembler, is_fragment, pack


class EscapeError(AssertionError):
    """Something invalid left the agent towards the browsers."""


@dataclass
class MemorySession:
    shapes: list[dict[str, Any]] = field(default_factory=list)
    room_id: str = "fuzz-room"
    session_id: str = "fuzz-session"
    envelopes: int = 0
    # The room's canvas (what the agent resolves against) and the client's, which only sees
    # what survives packing, encoding and decoding: the two must never diverge.
    room: CanvasMirror = field(default_factory=CanvasMirror)
    browser: CanvasMirror = field(default_factory=CanvasMirror)
    _seq: int = 0
    _fragments: FragmentAssembler = field(default_factory=FragmentAssembler)

    def __post_init__(self) -> None:
        self.room.load(self.shapes)
        self.browser.load(self.shapes)

    @property
    def canvas(self) -> CanvasMirror:
        return self.room

    async def request_context(
        self, *, bounds: Box | None = None, want_screenshot: bool = True
    ) -> CanvasSnapshot:
        return CanvasSnapshot(
            viewport=bounds or Box(x=0, y=0, w=1600, h=900),
            selection=[],
            doc_version=self._seq,
            shapes=copy.deepcopy(list(self.browser.shapes.values())),
        )

    async def request_picture(self, *, bounds: Box, max_size: int) -> Picture | None:
        return None  # no browser here renders images

    async def flush_actions(self) -> None:
        return None  # every send here completes before it returns

    async def send_actions(
        self, actions: list[WireAction], *, partial: bool = False, wait: bool = True
    ) -> int:
        self.room.apply(actions, partial=partial, session=self.session_id)
        for group in pack(self.session_id, actions, partial=partial):
            self._seq += 1
            env = ActionEnvelope(
                session_id=self.session_id,
                seq=self._seq,
                partial=partial or None,
                actions=group,
                ts=0.0,
            )
            try:
                payload = env.to_wire()
            except ValueError as err:  # e.g. NaN or a lone surrogate in params
                raise EscapeError(f"envelope does not encode: {err}") from err
            if len(payload) > MAX_ENVELOPE_BYTES:
                raise EscapeError(f"envelope of {len(payload)} bytes")
            back = decode(ActionEnvelope, payload, topic="agent:action", max_bytes=len(payload))
            if isinstance(back, ProtocolError):
                raise EscapeError(f"envelope does not decode: {back}")
            self.envelopes += 1
            for action in back.actions:
                if is_fragment(action.params):
                    params = self._fragments.add(action.id, action.params)
                    if params is None:
                        continue
                    action = WireAction(id=action.id, name=action.name, params=params)
                self.browser.apply_one(action, partial=bool(back.partial), session=self.session_id)
        return self._seq

    async def send_chat(
        self,
        text: str,
        *,
        role: str = "assistant",
        partial: bool = False,
        message_id: str | None = None,
    ) -> None:
        return None

    async def send_status(self, status: SessionStatus, detail: str | None = None) -> None:
        return None

    def cancelled(self) -> bool:
        return False


@dataclass
class ChunkModel:
    """A model provider that streams fixed chunks (the same ones for every request)."""

    chunks: list[str]
    name: str = "replay"

    async def stream(self, request: ModelRequest, usage: Usage) -> AsyncIterator[str]:
        for chunk in self.chunks:
            usage.output_tokens += 1
            yield chunk
