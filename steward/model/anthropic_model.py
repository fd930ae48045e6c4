"""`anthropic:<model>`: the Messages API through the anthropic SDK, streamed.

The static system prefix carries `cache_control`, so repeated requests read it from the
prompt cache. Failures before any output (429, 5xx, 529 overloaded, an `error` event, a
dropped connection) are retried with tenacity; once text has streamed, a failure surfaces as
`ModelError(started=True)` so the caller can revert what was partially applied. Cancelling
the consuming task closes the HTTP stream.

Two request features are optional, because some models refuse them with a 400: the
prefilled assistant opening and the sampling temperature (sent through `extra_body`: SDK 1.x
dropped the keyword). A refused feature is dropped, the request is asked once more without it,
and the provider remembers. Without the prefill the model writes the opening itself; it is
cut here, so callers still get the text after the prefill.
"""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from typing import Any

import anthropic
import httpx2

from steward.model.base import ModelError, ModelRequest, Usage
from steward.model.retries import Attempt, FeatureRefused, stream_with_retries
from steward.obs.logging import get_logger

log = get_logger(__name__)
_RETRY_TYPES = {"overloaded_error", "api_error", "rate_limit_error"}


# Words of the 400 message by which the API refuses each optional feature.
_REFUSALS = {
    "prefill": ("prefill", "final assistant", "end with a user"),
    "temperature": ("temperature",),
}


def _refused_feature(err: BaseException, sent: set[str]) -> str | None:
    """Which optional feature of the request a 400 refuses, if any."""
    if not isinstance(err, anthropic.BadRequestError):
        return None
    body = err.body if isinstance(err.body, dict) else {}
    message = str((body.get("error") or {}).get("message") or err.message).lower()
    for feature in sorted(sent):
        if any(word in message for word in _REFUSALS[feature]):
            return feature
    return None


def _classify(err: BaseException) -> tuple[str, bool]:
    if isinstance(err, (anthropic.RateLimitError, anthropic.InternalServerError)):
        return f"{type(err).__name__} ({err.status_code})", True
    if isinstance(err, anthropic.APIStatusError):
        body = err.body if isinstance(err.body, dict) else {}
        etype = (body.get("error") or {}).get("type") if isinstance(body, dict) else None
        return f"{etype or 'api error'} ({err.status_code})", etype in _RETRY_TYPES
    if isinstance(err, (anthropic.APIConnectionError, httpx2.TransportError)):
        return f"connection: {type(err).__name__}", True
    return f"{type(err).__name__}: {str(err)[:200]}", False


class AnthropicModel:
    """A model provider on Anthropic's Messages API: streams text and usage, retrying failures
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
        self.name = f"anthropic:{model}"
        self.temperature = temperature
        self.refused: set[str] = set()  # optional features this model's API refused
        self.attempts = attempts
        self.wait_max_s = wait_max_s
        self.client = anthropic.AsyncAnthropic(
            api_key=api_key or "missing-key",
            base_url=base_url,
            max_retries=0,  # tenacity does the retrying, with our classification
            timeout=timeout_s,
        )

    def features(self, request: ModelRequest) -> set[str]:
        """The optional features a request for this model carries."""
        wanted = {"prefill"} if request.prefill else set()
        if self.temperature is not None:
            wanted.add("temperature")
        return wanted - self.refused

    def build_params(
        self, request: ModelRequest, features: set[str] | None = None
    ) -> dict[str, Any]:
        features = self.features(request) if features is None else features
        system: list[dict[str, Any]] = [{"type": "text", "text": s} for s in request.system if s]
        if system:
            system[-1]["cache_control"] = {"type": "ephemeral"}
        content: list[dict[str, Any]] = []
        for block in request.user:
            if block.get("type") == "image" and block.get("data"):
                data = base64.b64encode(block["data"]).decode()
                media_type = str(block.get("media_type") or "image/jpeg")
                content.append(
                    {
                        "type": "image",
                        "source": {"type": "base64", "media_type": media_type, "data": data},
                    }
                )
            elif block.get("text"):
                content.append({"type": "text", "text": str(block["text"])})
        messages: list[dict[str, Any]] = [{"role": "user", "content": content}]
        if "prefill" in features:
            messages.append({"role": "assistant", "content": request.prefill})
        params: dict[str, Any] = {
            "model": self.model,
            "max_tokens": request.max_tokens,
            "system": system,
            "messages": messages,
        }
        if "temperature" in features:
            params["extra_body"] = {"temperature": self.temperature}
        return params

    async def _attempt(
        self, params: dict[str, Any], usage: Usage, features: set[str]
    ) -> AsyncIterator[str]:
        started = False
        try:
            async with self.client.messages.stream(**params) as stream:
                async for event in stream:
                    if event.type == "message_start":
                        u = event.message.usage
                        usage.input_tokens += u.input_tokens or 0
                        usage.cache_read_tokens += u.cache_read_input_tokens or 0
                        usage.cache_write_tokens += u.cache_creation_input_tokens or 0
                    elif event.type == "message_delta":
                        usage.output_tokens += event.usage.output_tokens or 0
                    elif event.type == "text":
                        started = True
                        yield event.text
        except (anthropic.APIError, httpx2.TransportError) as err:
            refused = None if started else _refused_feature(err, features)
            if refused is not None:
                raise FeatureRefused(refused) from err
            reason, retryable = _classify(err)
            log.warning("model_stream_failed", model=self.name, reason=reason, started=started)
            raise ModelError(
                f"{self.name}: {reason}", retryable=retryable, started=started
            ) from err

    async def stream(self, request: ModelRequest, usage: Usage) -> AsyncIterator[str]:
        def attempt_for(features: set[str]) -> Attempt:
            params = self.build_params(request, features)
            return lambda: self._attempt(params, usage, features)

        async for text in stream_with_retries(
            self.name,
            refused=self.refused,
            features=lambda: self.features(request),
            prefill=lambda features: "" if "prefill" in features else request.prefill,
            attempt_for=attempt_for,
            attempts=self.attempts,
            wait_max_s=self.wait_max_s,
        ):
            yield text
