"""`openai:<model>`: any server speaking OpenAI's Chat Completions protocol, streamed.

OpenAI, vLLM, Ollama, llama.cpp's server and most gateways speak it. The request goes out with
`stream: true` and `stream_options.include_usage`; screenshots travel as `image_url` data URLs.
The static system prefix is the first message and never changes between requests, so servers
that cache prompt prefixes (OpenAI does it by itself, vLLM with prefix caching on) reuse it;
the cached share comes back as `prompt_tokens_details.cached_tokens`.

The protocol has no prefill: the model writes the opening itself, and `Opening` cuts it, so
callers get the text after the prefill as from any provider. Failures before any output (408,
429, 5xx, an `error` frame, a dropped connection, a stream that ends early) are retried with
tenacity; once text has streamed a failure is `ModelError(started=True)`. An answer that is not
a Chat Completions stream at all is not retried: the run ends naming what came back.

Some request features are optional, because some servers refuse them with a 400: the sampling
temperature; the `max_tokens` name (newer OpenAI models want `max_completion_tokens`); the
output limit itself (a local model with a short context refuses prompt plus limit). A refused
feature is dropped or renamed, the request asked once more, and the provider remembers.
"""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp

from steward.model.base import ModelError, ModelRequest, Usage, estimate_tokens
from steward.model.retries import Attempt, FeatureRefused, stream_with_retries
from steward.obs.logging import get_logger

log = get_logger(__name__)
DEFAULT_BASE_URL = "https://api.openai.com/v1"

# Statuses worth asking again: timeouts, rate limits, conflicts and every server-side failure
# (529 is how some gateways say overloaded).
_RETRY_STATUS = frozenset({408, 409, 429})
# Words of an error (status 400) by which a server refuses each optional feature.
_REFUSALS = {
    "temperature": ("temperature",),
    "max_tokens": ("max_completion_tokens",),
    # A local model with a short context refuses prompt + limit: ask with no limit at all.
    "limit": ("maximum context length", "max_tokens is too large"),
}
# Words of an error frame's type or code that mean "busy, ask again".
_BUSY_WORDS = ("rate_limit", "overloaded", "server_error", "unavailable", "timeout")


def _error_text(raw: str) -> str:
    """The message of an error body (`{"error": {"message"}}` or similar), else its start."""
    try:
        body = json.loads(raw)
    except ValueError:
        return _snippet(raw)
    error = body.get("error", body) if isinstance(body, dict) else body
    if isinstance(error, dict):
        return str(error.get("message") or error.get("type") or error)[:200]
    return _snippet(str(error))


def _snippet(text: str, size: int = 60) -> str:
    squeezed = " ".join(text.split())
    return repr(squeezed[:size] + ("…" if len(squeezed) > size else ""))


def _refused_feature(message: str, sent: set[str]) -> str | None:
    lowered = message.lower()
    for feature in sorted(sent):
        if any(word in lowered for word in _REFUSALS[feature]):
            return feature
    return None


def _garbage(name: str, what: str, started: bool) -> ModelError:
    return ModelError(
        f"{name}: the server's answer is not a Chat Completions stream ({what})",
        retryable=False,
        started=started,
    )


class OpenAIModel:
    """A model provider on the Chat Completions protocol: streams text and usage, retrying failures
    before any output."""

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None,
        base_url: str | None = None,
        attempts: int = 4,
        wait_max_s: float = 8.0,
        timeout_s: float = 120.0,
        temperature: float | None = 0.0,
    ) -> None:
        self.model = model
        self.name = f"openai:{model}"
        self.url = (base_url or DEFAULT_BASE_URL).rstrip("/") + "/chat/completions"
        self.api_key = api_key
        self.temperature = temperature
        self.refused: set[str] = set()  # optional features this server refused
        self.attempts = attempts
        self.wait_max_s = wait_max_s
        # No total bound: a long answer streams for minutes; the run's watchdog bounds it.
        self.timeout = aiohttp.ClientTimeout(total=None, connect=15, sock_read=timeout_s)

    def features(self) -> set[str]:
        wanted = {"limit", "max_tokens"}
        if self.temperature is not None:
            wanted.add("temperature")
        return wanted - self.refused

    def build_body(self, request: ModelRequest, features: set[str] | None = None) -> dict[str, Any]:
        features = self.features() if features is None else features
        content: list[dict[str, Any]] = []
        for block in request.user:
            if block.get("type") == "image" and block.get("data"):
                data = base64.b64encode(block["data"]).decode()
                media_type = str(block.get("media_type") or "image/jpeg")
                url = f"data:{media_type};base64,{data}"
                content.append({"type": "image_url", "image_url": {"url": url}})
            elif block.get("text"):
                content.append({"type": "text", "text": str(block["text"])})
        messages: list[dict[str, Any]] = []
        system = "\n\n".join(s for s in request.system if s)
        if system:
            messages.append({"role": "system", "content": system})
        messages.append({"role": "user", "content": content})
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if "limit" in features:
            limit = "max_tokens" if "max_tokens" in features else "max_completion_tokens"
            body[limit] = request.max_tokens
        if "temperature" in features:
            body["temperature"] = self.temperature
        return body

    async def stream(self, request: ModelRequest, usage: Usage) -> AsyncIterator[str]:
        def attempt_for(features: set[str]) -> Attempt:
            body = self.build_body(request, features)
            return lambda: self._attempt(body, usage, features)

        async for text in stream_with_retries(
            self.name,
            refused=self.refused,
            features=self.features,
            prefill=lambda _features: request.prefill,  # no prefill: the opening is cut
            attempt_for=attempt_for,
            attempts=self.attempts,
            wait_max_s=self.wait_max_s,
        ):
            yield text

    async def _attempt(
        self, body: dict[str, Any], usage: Usage, features: set[str]
    ) -> AsyncIterator[str]:
        started = False
        try:
            headers = {"Accept": "text/event-stream"}
            if self.api_key:
                headers["Authorization"] = f"Bearer {self.api_key}"
            async with (
                aiohttp.ClientSession(timeout=self.timeout) as http,
                http.post(self.url, json=body, headers=headers) as resp,
            ):
                if resp.status != 200:
                    raise self._status_error(resp.status, await _head(resp), features)
                reported = finished = False
                chars = 0
                async for frame in _frames(resp.content):
                    if frame == "[DONE]":
                        break
                    chunk = _chunk(self.name, frame, started)
                    if "usage" in chunk and isinstance(chunk["usage"], dict):
                        reported = True
                        _count(chunk["usage"], usage)
                    for choice in chunk.get("choices") or []:
                        finished = finished or bool((choice or {}).get("finish_reason"))
                        text = ((choice or {}).get("delta") or {}).get("content")
                        if isinstance(text, str) and text:
                            started = True
                            chars += len(text)
                            yield text
                else:  # closed without [DONE]: complete only if the choice said it finished
                    if not finished:
                        raise ModelError(
                            f"{self.name}: the stream ended before it was complete",
                            retryable=True,
                            started=started,
                        )
                if not reported:  # the server keeps no count: estimate one
                    usage.input_tokens += estimate_tokens(_prompt_text(body))
                    usage.output_tokens += max(1, chars // 4)
        except ModelError as err:
            log.warning("model_stream_failed", model=self.name, reason=str(err), started=started)
            raise
        except (aiohttp.ClientError, TimeoutError) as err:
            reason = f"connection: {type(err).__name__}"
            log.warning("model_stream_failed", model=self.name, reason=reason, started=started)
            raise ModelError(f"{self.name}: {reason}", retryable=True, started=started) from err
        except ValueError as err:  # a line that is no event (or longer than any): not SSE
            log.warning("model_stream_failed", model=self.name, reason="garbage", started=started)
            what = f"a line that is not an event: {_snippet(str(err))}"
            raise _garbage(self.name, what, started) from err

    def _status_error(self, status: int, raw: str, features: set[str]) -> Exception:
        message = _error_text(raw)
        if status == 400 and (refused := _refused_feature(message, features)) is not None:
            return FeatureRefused(refused)
        retryable = status in _RETRY_STATUS or status >= 500
        return ModelError(f"{self.name}: HTTP {status}: {message}", retryable=retryable)


async def _head(resp: aiohttp.ClientResponse, limit: int = 16384) -> str:
    """The start of an error body: enough for its message, bounded whatever the server sends."""
    raw = b""
    while len(raw) < limit and (piece := await resp.content.read(limit - len(raw))):
        raw += piece
    return raw.decode("utf-8", errors="replace")


async def _frames(content: aiohttp.StreamReader) -> AsyncIterator[str]:
    """The `data:` payloads of a server-sent event stream (other fields and comments skipped)."""
    async for raw in content:
        line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
        if line.startswith("data:"):
            yield line[5:].strip()
        elif line and not line.startswith((":", "event:", "id:", "retry:")):
            raise ValueError(line[:80])


def _chunk(name: str, frame: str, started: bool) -> dict[str, Any]:
    """One `chat.completion.chunk`; an `error` frame becomes a ModelError."""
    try:
        chunk = json.loads(frame)
    except ValueError:
        raise _garbage(name, f"a frame that is not JSON: {_snippet(frame)}", started) from None
    if not isinstance(chunk, dict):
        raise _garbage(name, f"a frame that is not an object: {_snippet(frame)}", started)
    if "error" in chunk:
        error = chunk["error"] if isinstance(chunk["error"], dict) else {"message": chunk["error"]}
        kind = f"{error.get('type') or ''} {error.get('code') or ''}".lower()
        busy = any(word in kind for word in _BUSY_WORDS) or str(error.get("code")) in {
            "429",
            "500",
            "503",
            "529",
        }
        message = str(error.get("message") or kind.strip() or "error")[:200]
        raise ModelError(f"{name}: error frame: {message}", retryable=busy, started=started)
    if not isinstance(chunk.get("choices", []), list):
        raise _garbage(name, f"a chunk without choices: {_snippet(frame)}", started)
    return chunk


def _prompt_text(body: dict[str, Any]) -> str:
    """The request's text (images left out), for estimating its tokens."""
    parts: list[str] = []
    for message in body["messages"]:
        content = message["content"]
        if isinstance(content, str):
            parts.append(content)
        else:
            parts.extend(str(p.get("text", "")) for p in content if p.get("type") == "text")
    return "\n".join(parts)


def _count(reported: dict[str, Any], usage: Usage) -> None:
    """Add a final chunk's usage; input excludes the cached share, as the Anthropic API counts."""
    prompt = int(reported.get("prompt_tokens") or 0)
    details = reported.get("prompt_tokens_details") or {}
    cached = int(details.get("cached_tokens") or 0) if isinstance(details, dict) else 0
    usage.input_tokens += max(0, prompt - cached)
    usage.cache_read_tokens += cached
    usage.output_tokens += int(reported.get("completion_tokens") or 0)
