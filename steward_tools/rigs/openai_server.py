"""A local aiohttp server speaking OpenAI's streaming Chat Completions protocol (SSE).

The real `openai:` provider talks to it, so tests and benches run the provider's own path
(streaming, retries, images, usage) with no key and no internet. Requests are answered by the
same responders as the local Messages server (`steward_tools.rigs.responders`): each body is
read in the Messages shape (system text, user text and image blocks, no prefill), so a test
model is written once for both protocols. Like servers that cache prompt prefixes, it reports
a system message it has seen before as `prompt_tokens_details.cached_tokens`.

A queue of scenarios injects failures: HTTP 429/529/500/503, an `error` frame before any text,
a connection cut after some text, a stream that stops without `[DONE]` (`truncated`, after
some text; `empty`, before any), and two kinds of
garbage (a 200 whose body is an HTML page; a `data:` frame that is not JSON); `no_usage` ends
after the finish with no usage and no `[DONE]`, as some servers do. Images must be
`data:` URLs of an accepted type whose bytes match it, else 400. With `refuse_temperature` /
`refuse_max_tokens` it refuses those fields, as some OpenAI models do; with `context_tokens`
it refuses a prompt plus output limit longer than that, as vLLM does.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from steward.model.base import estimate_tokens
from steward_tools.rigs.anthropic_server import Reply, Responder, image_problem, serve_local

_STATUS_SCENARIOS = {"429", "500", "503", "529"}


def messages_shape(body: dict[str, Any]) -> dict[str, Any]:
    """A Chat Completions request as the Messages API would carry it, for responders."""
    system: list[dict[str, Any]] = []
    messages: list[dict[str, Any]] = []
    for message in body.get("messages") or []:
        content = message.get("content")
        if message.get("role") == "system":
            system.append({"type": "text", "text": str(content)})
            continue
        blocks: list[dict[str, Any]] = []
        for part in content if isinstance(content, list) else [{"type": "text", "text": content}]:
            if part.get("type") == "text":
                blocks.append({"type": "text", "text": str(part.get("text", ""))})
            elif part.get("type") == "image_url":
                url = str((part.get("image_url") or {}).get("url", ""))
                head, _, data = url.partition(",")
                media_type = head.removeprefix("data:").removesuffix(";base64")
                if not head.startswith("data:") or not head.endswith(";base64"):
                    media_type = f"not a base64 data URL: {head[:40]}"
                source = {"type": "base64", "media_type": media_type, "data": data}
                blocks.append({"type": "image", "source": source})
        messages.append({"role": message.get("role"), "content": blocks})
    return {"model": body.get("model"), "system": system, "messages": messages}


def frame(data: dict[str, Any] | str) -> bytes:
    text = data if isinstance(data, str) else json.dumps(data)
    return f"data: {text}\n\n".encode()


def delta_chunk(model: str, piece: str | None, finish: str | None = None) -> dict[str, Any]:
    delta = {} if piece is None else {"content": piece}
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [choice],
    }


@dataclass
class ChatCompletionsServer:
    """`POST /v1/chat/completions` on 127.0.0.1; every request body is kept in `requests`."""

    responder: Responder
    scenarios: list[str] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    refuse_temperature: bool = False
    refuse_max_tokens: bool = False
    # Like a local model with a short context: prompt plus output limit must fit in it.
    context_tokens: int | None = None
    port: int = 0
    _seen_prefixes: set[str] = field(default_factory=set)
    _runner: web.AppRunner | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def start(self) -> str:
        self._runner, self.port = await serve_local("/v1/chat/completions", self.handle)
        return self.base_url

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    def _refusal(self, body: dict[str, Any]) -> str | None:
        if not body.get("stream"):
            return "this server only streams: set `stream: true`"
        if self.refuse_temperature and "temperature" in body:
            return "Unsupported value: 'temperature' does not support 0 with this model."
        if self.refuse_max_tokens and "max_tokens" in body:
            return (
                "Unsupported parameter: 'max_tokens' is not supported with this model. "
                "Use 'max_completion_tokens' instead."
            )
        limit = body.get("max_tokens") or body.get("max_completion_tokens") or 0
        prompt = estimate_tokens(json.dumps(body["messages"]))
        if self.context_tokens is not None and prompt + limit > self.context_tokens:
            return (
                f"This model's maximum context length is {self.context_tokens} tokens. However, "
                f"you requested {prompt + limit} tokens ({prompt} in the messages, {limit} in "
                "the completion)."
            )
        return image_problem(messages_shape(body))

    async def handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.requests.append(body)
        self.headers.append(dict(request.headers))
        problem = self._refusal(body)
        if problem is not None:
            error = {"message": problem, "type": "invalid_request_error", "code": None}
            return web.json_response({"error": error}, status=400)
        scenario = self.scenarios.pop(0) if self.scenarios else "ok"
        if scenario in _STATUS_SCENARIOS:
            error = {"message": f"busy ({scenario})", "type": "server_error", "code": scenario}
            return web.json_response({"error": error}, status=int(scenario))
        if scenario == "garbage":
            page = "<html><body><h1>502 Bad Gateway</h1>nginx</body></html>\n"
            return web.Response(text=page, content_type="text/html")
        model = str(body.get("model", "x"))
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        await resp.write(b": keep-alive\n\n")
        if scenario == "error_frame":
            error = {"message": "Overloaded", "type": "overloaded_error", "code": "529"}
            await resp.write(frame({"error": error}))
            return resp
        if scenario == "empty":
            return resp  # a stream closed before its first chunk
        if scenario == "garbage_frame":
            await resp.write(frame("<<not json at all>>"))
            return resp
        await resp.write(frame(delta_chunk(model, "")))  # the role chunk servers open with
        reply = self.responder(messages_shape(body))
        chunks = reply.first_half() if scenario in ("cut", "truncated") else reply.chunks
        for piece in chunks:
            await resp.write(frame(delta_chunk(model, piece)))
        if scenario == "cut":
            assert request.transport is not None
            request.transport.abort()  # the connection drops mid-stream
            return resp
        if scenario == "truncated":
            return resp  # closes cleanly, but without a finish or [DONE]
        await resp.write(frame(delta_chunk(model, None, "stop")))
        if scenario == "no_usage":
            return resp  # a server that counts nothing and closes after the finish
        await resp.write(frame(self._usage(body, model, reply)))
        await resp.write(frame("[DONE]"))
        return resp

    def _usage(self, body: dict[str, Any], model: str, reply: Reply) -> dict[str, Any]:
        system = next(
            (str(m.get("content")) for m in body["messages"] if m.get("role") == "system"), ""
        )
        cached = estimate_tokens(system) if system in self._seen_prefixes else 0
        self._seen_prefixes.add(system)
        usage = {
            "prompt_tokens": 100 + cached,
            "completion_tokens": reply.output_tokens,
            "total_tokens": 100 + cached + reply.output_tokens,
            "prompt_tokens_details": {"cached_tokens": cached},
        }
        chunk = delta_chunk(model, None)
        chunk["choices"] = []
        chunk["usage"] = usage
        return chunk
