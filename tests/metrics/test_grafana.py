"""docs/grafana-dashboard.json: valid JSON, the panels the issue asks for, and only metrics
anemon serves (the names come from anemon.metrics, where the metrics are made)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from anemon.metrics import METRIC_NAMES

DASHBOARD = Path(__file__).resolve().parents[2] / "docs" / "grafana-dashboard.json"
NAME = re.compile(r"\banemon_[a-z_]+\b")


def queries(node: Any) -> Iterator[str]:
    """Every PromQL text in the dashboard: panel targets and template variables alike."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("expr", "definition") and isinstance(value, str):
                yield value
            elif key == "query" and isinstance(value, str | dict):
                yield from ([value] if isinstance(value, str) else queries(value))
            else:
                yield from queries(value)
    elif isinstance(node, list):
        for item in node:
            yield from queries(item)


def test_the_dashboard_is_json_with_the_asked_panels():
    dashboard = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    exprs = {p["title"]: " ".join(t["expr"] for t in p["targets"]) for p in dashboard["panels"]}
    asked = {"anemon_decode_tps": "decode", "anemon_thermal_state": "thermal",
             "anemon_power_watts": "w"}  # fmt: skip
    for metric, word in asked.items():
        assert any(metric in e and word in t.lower() for t, e in exprs.items()), metric
    assert len({p["id"] for p in dashboard["panels"]}) == len(dashboard["panels"])


def test_every_metric_the_dashboard_names_is_served():
    dashboard = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    named = {name for text in queries(dashboard) for name in NAME.findall(text)}
    assert named, "no anemon metric found in the dashboard's queries"
    assert named <= METRIC_NAMES, named - METRIC_NAMES
