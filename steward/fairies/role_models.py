"""Which model provider a fairy's turn uses: the model its user's prompt named, else the
configured model of the turn's role."""

from __future__ import annotations

from collections.abc import Callable

from steward.config import ModelRole, Settings
from steward.model.base import ModelProvider
from steward.model.registry import get_model
from steward.model.scripted.project_model import ScriptedProjectModel

# (the run's model override or None, the role of the turn) → provider.
ModelFactory = Callable[[str | None, ModelRole], ModelProvider]


def default_models(name: str | None, role: ModelRole) -> ModelProvider:
    if name in (None, "", "scripted"):
        return ScriptedProjectModel(tokens_per_s=None)
    raise ValueError(f"FairyRuntime has no provider for model {name!r}; pass a ModelFactory")


def models_from_settings(settings: Settings) -> ModelFactory:
    """`None` is the role's configured model (`Settings.model_for_role`); `scripted` is the
    project-aware scripted model (so a scripted room can run whole projects); anything else
    goes through the model registry. Providers are cached per name (the Anthropic client
    keeps its connection pool)."""
    cache: dict[str, ModelProvider] = {}

    def make(name: str | None, role: ModelRole) -> ModelProvider:
        spec = name or settings.model_for_role(role)
        if spec not in cache:
            if spec == "scripted":
                rate = settings.steward_scripted_tokens_per_s
                cache[spec] = ScriptedProjectModel(tokens_per_s=rate or None)
            else:
                cache[spec] = get_model(spec, settings)
        return cache[spec]

    return make
