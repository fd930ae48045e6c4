"""Model settings: a model per role with a fallback, and the sampling temperature."""

from __future__ import annotations

import pytest

from steward.config import MODEL_ROLES, Settings


def test_each_role_falls_back_to_the_steward_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STEWARD_MODEL", "anthropic:base")
    monkeypatch.setenv("STEWARD_MODEL_ORCHESTRATOR", "anthropic:planner")
    monkeypatch.setenv("STEWARD_MODEL_DRONE", "")  # empty means unset
    s = Settings()
    assert {r: s.model_for_role(r) for r in MODEL_ROLES} == {
        "one-shot": "anthropic:base",
        "orchestrator": "anthropic:planner",
        "duo": "anthropic:base",
        "drone": "anthropic:base",
    }


@pytest.mark.parametrize(("raw", "want"), [(None, 0.0), ("none", None), ("0.3", 0.3)])
def test_temperature_defaults_to_zero_and_none_disables(
    monkeypatch: pytest.MonkeyPatch, raw: str | None, want: float | None
) -> None:
    if raw is not None:
        monkeypatch.setenv("STEWARD_MODEL_TEMPERATURE", raw)
    assert Settings().steward_model_temperature == want


def test_a_temperature_out_of_range_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STEWARD_MODEL_TEMPERATURE", "3")
    with pytest.raises(ValueError, match="steward_model_temperature"):
        Settings()


def test_the_role_models_are_allowed_to_callers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STEWARD_MODEL", "anthropic:base")
    monkeypatch.setenv("STEWARD_MODEL_DRONE", "anthropic:small")
    monkeypatch.setenv("STEWARD_MODELS_ALLOWED", "anthropic:big")
    assert Settings().models_allowed() == {"anthropic:base", "anthropic:small", "anthropic:big"}
