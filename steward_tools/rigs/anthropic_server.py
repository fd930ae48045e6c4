"""A local aiohttp server speaking the Anthropic Messages streaming protocol (SSE).

The real `anthropic:` provider talks to it, so tests and benches run the provider's own path
(SDK, retries, prefill, images) with no key and no internet. What each request is answered
with comes from a pluggable *responder*: a fixed text, or a test model that reads the request
(`steward_tools.rigs.responders`). A queue of scenarios injects failures: HTTP 429/529/500, an
`error` event (overloaded) before any text, or a connection cut after some text. Like the real
API, it refuses (400 `invalid_request_error`) an image block whose media type is not one it
accepts or whose bytes are not of that type; with `refuse_prefill` / `refuse_temperature` it
refuses a request ending in an assistant turn / carrying a temperature, as newer models do.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web


@dataclass(frozen=True)
class Reply:
    """What one request is answered with: the text, already split into stream chunks."""

    chunks: list[str]
    stop_reason: str = "end_turn"
    output_tokens: int = 15

    @property
    def text(self) -> str:
        return "".join(self.chunks)

    def first_half(self) -> list[str]:
        """The chunks of (about) the first half of the text: what a cut stream delivers."""
        half, out, sent = max(1, len(self.text) // 2), [], 0
        for piece in self.chunks:
            if sent >= half:
                break
            out.append(piece[: half - sent])
            sent += len(out[-1])
        return out


# A responder answers one request body (as the SDK sent it) with a reply.
Responder = Callable[[dict[str, Any]], Reply]


def split_text(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), max(1, size))]


def sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


# The frames of one streamed message, shared by every local server that speaks the protocol.
def message_start(model: str, usage: dict[str, int], message_id: str = "msg_1") -> bytes:
    message: dict[str, Any] = {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "content": [],
        "model": model,
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage,
    }
    return sse("message_start", {"type": "message_start", "message": message})


def text_block_start(index: int = 0) -> bytes:
    block = {"type": "text", "text": ""}
    return sse(
        "content_block_start",
        {"type": "content_block_start", "index": index, "content_block": block},
    )


def text_delta(piece: str, index: int = 0) -> bytes:
    delta = {"type": "text_delta", "text": piece}
    return sse(
        "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
    )


def block_stop(index: int = 0) -> bytes:
    return sse("content_block_stop", {"type": "content_block_stop", "index": index})


def message_end(output_tokens: int, stop_reason: str = "end_turn") -> bytes:
    end = {
        "type": "message_delta",
        "usage": {"output_tokens": output_tokens},
        "delta": {"stop_reason": stop_reason, "stop_sequence": None},
    }
    return sse("message_delta", end) + sse("message_stop", {"type": "message_stop"})


def error_event(error_type: str, message: str) -> bytes:
    return sse("error", {"type": "error", "error": {"type": error_type, "message": message}})


PING = sse("ping", {"type": "ping"})


# The image media types the Messages API accepts, with the signature their bytes start with.
IMAGE_SIGNATURES: dict[str, Callable[[bytes], bool]] = {
    "image/jpeg": lambda b: b[:2] == b"\xff\xd8",
    "image/png": lambda b: b[:8] == b"\x89PNG\r\n\x1a\n",
    "image/gif": lambda b: b[:4] == b"GIF8",
    "image/webp": lambda b: b[:4] == b"RIFF" and b[8:12] == b"WEBP",
}


def image_problem(body: dict[str, Any]) -> str | None:
    """Why the API would refuse the request's images, or None."""
    for message in body.get("messages", []):
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if block.get("type") != "image":
                continue
            source = block.get("source", {})
            media_type = source.get("media_type")
            if media_type not in IMAGE_SIGNATURES:
                return f"unsupported image media type: {media_type!r}"
            try:
                data = base64.b64decode(source.get("data", ""), validate=True)
            except (binascii.Error, ValueError):
                return "image data is not valid base64"
            if not IMAGE_SIGNATURES[media_type](data):
                return f"Image does not match the provided media type {media_type}"
    return None


_ERROR_TYPES = {"429": "rate_limit_error", "529": "overloaded_error", "500": "api_error"}


async def serve_local(
    path: str, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> tuple[web.AppRunner, int]:
    """An aiohttp app answering POST `path` on 127.0.0.1, at a port the OS picks: its runner
    (to clean up) and the port."""
    app = web.Application(client_max_size=64 * 1024 * 1024)  # screenshots are large
    app.router.add_post(path, handler)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    return runner, int(runner.addresses[0][1])


@dataclass
class MessagesServer:
    """`POST /v1/messages` on 127.0.0.1; every request body is kept in `requests`."""

    responder: Responder
    scenarios: list[str] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    refuse_prefill: bool = False
    refuse_temperature: bool = False
    port: int = 0
    _runner: web.AppRunner | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> str:
        self._runner, self.port = await serve_local("/v1/messages", self.handle)
        return self.base_url

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.requests.append(body)
        problem = image_problem(body)
        if self.refuse_prefill and body.get("messages", [{}])[-1].get("role") == "assistant":
            problem = (
                "This model does not support assistant message prefill. "
                "The conversation must end with a user message."
            )
        if self.refuse_temperature and "temperature" in body:
            problem = "`temperature` is deprecated for this model."
        if problem is not None:
            return web.json_response(
                {"type": "error", "error": {"type": "invalid_request_error", "message": problem}},
                status=400,
            )
        scenario = self.scenarios.pop(0) if self.scenarios else "ok"
        if scenario in _ERROR_TYPES:
            return web.json_response(
                {"type": "error", "error": {"type": _ERROR_TYPES[scenario], "message": scenario}},
                status=int(scenario),
            )
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        usage = {
            "input_tokens": 100,
            "output_tokens": 1,
            "cache_creation_input_tokens": 50,
            "cache_read_input_tokens": 20,
        }
        await resp.write(message_start(body.get("model", "x"), usage))
        if scenario == "error_event":
            await resp.write(error_event("overloaded_error", "Overloaded"))
            return resp
        await resp.write(text_block_start())
        await resp.write(PING)
        reply = self.responder(body)
        chunks = reply.first_half() if scenario == "cut" else reply.chunks
        for piece in chunks:
            await resp.write(text_delta(piece))
        if scenario == "cut":
            assert request.transport is not None
            request.transport.abort()  # the connection drops mid-stream
            return resp
        await resp.write(block_stop())
        await resp.write(message_end(reply.output_tokens, reply.stop_reason))
        return resp
