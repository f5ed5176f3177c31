"""What `manifests/monitoring` names: its PrometheusRule as the plain rules file promtool reads, the
PromQL of every rule and dashboard panel, and the metric names (with the job they must come from)
that those expressions select.

The names are read from the expressions by a small lexer rather than a PromQL parser: selectors
are identifiers not followed by `(` (functions and aggregations are), outside `by (...)`-style
label lists, range brackets and strings. That is the whole of PromQL the manifests use; a test of
the lexer pins the cases.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

MONITORING_DIR = Path(__file__).resolve().parents[1] / "manifests" / "monitoring"
PROMETHEUS_RULE = MONITORING_DIR / "prometheusrule.yaml"
DASHBOARD = MONITORING_DIR / "dashboards" / "olm.json"

EXTERNAL_METRICS = frozenset(
    {
        "up",  # written by Prometheus itself for every scrape target
        "container_memory_working_set_bytes",  # cAdvisor, through the kubelet
        "kube_pod_container_resource_limits",  # kube-state-metrics
        "kube_pod_container_resource_requests",  # kube-state-metrics
    }
)
"""Names the rules and the dashboard read from other exporters: not served by OLM's processes."""

_KEYWORDS = frozenset(
    {"and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring", "group_left", "group_right"}
    | {"inf", "nan"}
)
_BRACES = re.compile(r"\{[^{}]*\}")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_RANGE = re.compile(r"\[[^\[\]]*\]")
_LABEL_LIST = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)")
_SELECTOR = re.compile(r"(?<![\w:.])([a-zA-Z_:][\w:]*)\s*(\x00\d+\x00)?(\s*\()?")
_JOB = re.compile(r'\bjob\s*=\s*"([^"]*)"')


@dataclass(frozen=True, order=True)
class Reference:
    """A metric an expression selects, and the job its selector requires (None: any job)."""

    metric: str
    job: str | None = None


def references(expression: str) -> set[Reference]:
    """Every metric `expression` selects."""
    blocks: list[str] = []

    def hide(match: re.Match[str]) -> str:
        blocks.append(match.group(0))
        return f"\x00{len(blocks) - 1}\x00"

    text = _BRACES.sub(hide, expression)
    text = _STRING.sub(" ", _RANGE.sub(" ", text))
    text = _LABEL_LIST.sub(" ", text)
    found = set()
    for name, block, call in _SELECTOR.findall(text):
        if call or name in _KEYWORDS:
            continue
        job = None
        if block:
            matched = _JOB.search(blocks[int(block.strip("\x00"))])
            job = matched.group(1) if matched else None
        found.add(Reference(name, job))
    return found


def prometheus_rule() -> dict[str, Any]:
    loaded = yaml.safe_load(PROMETHEUS_RULE.read_text())
    if not isinstance(loaded, dict) or loaded.get("kind") != "PrometheusRule":
        raise ValueError(f"{PROMETHEUS_RULE} does not hold one PrometheusRule")
    return loaded


class _BlockDumper(yaml.SafeDumper):
    """Writes multi-line strings (the expressions) as literal blocks, as they are written in the
    manifest, so the rules file reads like one."""


def _string(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|" if "\n" in value else None)


_BlockDumper.add_representer(str, _string)


def rules_file() -> str:
    """The PrometheusRule's groups as a Prometheus rules file (what the operator generates)."""
    groups = prometheus_rule()["spec"]["groups"]
    return yaml.dump({"groups": groups}, Dumper=_BlockDumper, sort_keys=False, width=1000)


def rule_expressions() -> list[str]:
    return [rule["expr"] for group in prometheus_rule()["spec"]["groups"] for rule in group["rules"]]


def dashboard_expressions() -> list[str]:
    dashboard = json.loads(DASHBOARD.read_text())
    return [target["expr"] for panel in dashboard["panels"] for target in panel.get("targets", [])]


def referenced() -> set[Reference]:
    """Every metric the rules and the dashboard select, external ones included."""
    return {ref for expr in (*rule_expressions(), *dashboard_expressions()) for ref in references(expr)}
