"""Pick a provider from a model spec: `scripted`, `anthropic:<model>`, `openai:<model>`,
`replay:<file>`."""

from __future__ import annotations

import importlib
from collections.abc import Iterable

from steward.config import Settings
from steward.model.base import ModelError, ModelProvider

_PROVIDERS = {
    "scripted": "steward.model.scripted",
    "anthropic": "steward.model.anthropic_model",
    "openai": "steward.model.openai_model",
    "replay": "steward.model.replay",
}


def preload(specs: Iterable[str]) -> None:
    """Import the providers these specs name now: a provider first imported inside a running
    room holds the import lock for seconds (the SDK is large), stalling every room's loop in
    the process, lease renewals included."""
    for spec in specs:
        module = _PROVIDERS.get(spec.partition(":")[0])
        if module is not None:
            importlib.import_module(module)


def get_model(spec: str, settings: Settings, *, tokens_per_s: float | None = None) -> ModelProvider:
    kind, _, arg = spec.partition(":")
    if kind == "scripted":
        from steward.model.scripted import ScriptedModel

        rate = tokens_per_s if tokens_per_s is not None else settings.steward_scripted_tokens_per_s
        return ScriptedModel(tokens_per_s=rate or None)
    if kind == "anthropic" and arg:
        from steward.model.anthropic_model import AnthropicModel

        key = settings.anthropic_api_key.get_secret_value() if settings.anthropic_api_key else None
        return AnthropicModel(
            arg,
            api_key=key,
            base_url=settings.anthropic_base_url,
            temperature=settings.steward_model_temperature,
        )
    if kind == "openai" and arg:
        from steward.model.openai_model import OpenAIModel

        secret = settings.openai_api_key
        return OpenAIModel(
            arg,
            api_key=secret.get_secret_value() if secret else None,
            base_url=settings.openai_base_url,
            temperature=settings.steward_model_temperature,
        )
    if kind == "replay" and arg:
        from steward.model.replay import ReplayModel

        return ReplayModel(arg)
    raise ModelError(
        f"unknown model {spec!r}: use scripted, anthropic:<model>, openai:<model> or replay:<file>"
    )
