"""The Grafana dashboard and the Prometheus alert rules load, and name only real metrics."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml
from prometheus_client import REGISTRY

import steward.obs.metrics  # noqa: F401  (registers the steward's metrics)
from steward.config import PROJECT_ROOT

OPS = PROJECT_ROOT / "ops"
_METRIC = re.compile(r"\bsteward_[a-z_]+")
_SUFFIXES = ("_bucket", "_count", "_sum")


def exported() -> set[str]:
    names: set[str] = set()
    for family in REGISTRY.collect():
        # A labelled metric has no samples before its first use: its family name counts.
        names.add(family.name)
        if family.type == "counter":
            names.add(family.name + "_total")
        names.update(sample.name for sample in family.samples)
    return names


def _check(exprs: list[str], where: Path) -> None:
    known = exported()
    assert exprs, f"no expressions in {where}"
    for expr in exprs:
        used = set(_METRIC.findall(expr))
        assert used, f"{where}: {expr!r} names no steward metric"
        for name in used:
            base = next((name[: -len(s)] for s in _SUFFIXES if name.endswith(s)), name)
            assert name in known or base in known, f"{where}: {name} is not exported by the steward"
        assert expr.count("(") == expr.count(")"), f"{where}: unbalanced {expr!r}"


def test_alert_rules_load_and_cover_the_operator_cases() -> None:
    path = OPS / "prometheus" / "steward-alerts.yml"
    doc = yaml.safe_load(path.read_text())
    rules = [r for g in doc["groups"] for r in g["rules"]]
    names = {r["alert"] for r in rules}
    assert {
        "StewardSessionsStalled",
        "StewardRetransmitStorm",
        "StewardBudgetExhausted",
        "StewardDegradedContexts",
    } <= names
    for r in rules:
        assert r["annotations"]["summary"] and r["labels"]["severity"]
    _check([r["expr"] for r in rules], path)
    config = yaml.safe_load((OPS / "prometheus" / "prometheus.yml").read_text())
    assert config["rule_files"] == [path.name]
    assert config["scrape_configs"][0]["metrics_path"] == "/metrics"


def test_dashboard_loads_and_every_panel_queries_a_real_metric() -> None:
    path = OPS / "grafana" / "canvas-steward.json"
    dash = json.loads(path.read_text())
    panels = dash["panels"]
    assert len({p["id"] for p in panels}) == len(panels)
    _check([t["expr"] for p in panels for t in p["targets"]], path)
