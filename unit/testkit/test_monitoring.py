"""The lexer that reads metric names out of the monitoring manifests' PromQL."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from olm_testkit import monitoring
from olm_testkit.monitoring import Reference

MANIFESTS = monitoring.MONITORING_DIR.parent


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        pytest.param("up == 0", {Reference("up")}, id="bare-name"),
        pytest.param(
            'rate(x_total{job="catalogd", code=~"5..|<error>"}[5m])',
            {Reference("x_total", "catalogd")},
            id="function-selector-range",
        ),
        pytest.param(
            'max by (name, le) (a{job=~"c|d"}) / on (pod) group_left (node) b{job="d"} > 0.9',
            {Reference("a"), Reference("b", "d")},
            id="label-lists-and-a-job-regex",
        ),
        pytest.param(
            "histogram_quantile(0.95, sum by (le) (rate(h_bucket[$__rate_interval]))) or vector(0)",
            {Reference("h_bucket")},
            id="grafana-variable-and-functions",
        ),
        pytest.param(
            "sum(a offset 5m) and bool b unless c:recorded",
            {Reference("a"), Reference("b"), Reference("c:recorded")},
            id="keywords-and-recording-rule-names",
        ),
        pytest.param('count(x{reason!="by (name)"}) or 1e3', {Reference("x")}, id="strings-and-numbers"),
    ],
)
def test_metric_names_are_read_from_promql(expression: str, expected: set[Reference]) -> None:
    assert monitoring.references(expression) == expected


def test_the_manifests_reference_the_processes_metrics_and_the_listed_external_ones() -> None:
    names = {ref.metric for ref in monitoring.referenced()}
    assert names >= monitoring.EXTERNAL_METRICS
    assert {"olm_clusterextension_status_condition", "olm_clustercatalog_status_condition"} <= names


def test_the_rules_file_holds_every_rule_of_the_prometheus_rule() -> None:
    groups = yaml.safe_load(monitoring.rules_file())["groups"]
    assert [rule["alert"] for group in groups for rule in group["rules"]] == [
        "OLMClusterExtensionNotInstalled",
        "OLMClusterExtensionBlocked",
        "OLMClusterExtensionRevisionsPilingUp",
        "OLMClusterCatalogNotServing",
        "OLMClusterCatalogNotProgressing",
        "OLMTargetDown",
        "OLMReconcileErrors",
        "OLMAPIRequestRateHigh",
        "OLMAPIRequestErrors",
        "OLMMemoryNearLimit",
        "OLMMemoryAboveRequest",
    ]


def _documents(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


def test_each_service_monitor_scrapes_the_metrics_port_of_a_shipped_service() -> None:
    kustomization = yaml.safe_load((monitoring.MONITORING_DIR / "kustomization.yaml").read_text())
    services = [
        doc
        for path in MANIFESTS.glob("*/service.yaml")
        for doc in _documents(path)
        if doc["metadata"]["namespace"] == kustomization["namespace"]
    ]
    monitors = _documents(monitoring.MONITORING_DIR / "servicemonitors.yaml")
    assert sorted(m["metadata"]["name"] for m in monitors) == ["catalogd", "operator-controller"]
    for monitor in monitors:
        selector = monitor["spec"]["selector"]["matchLabels"]
        (service,) = [s for s in services if selector.items() <= s["metadata"]["labels"].items()]
        # The job label is the Service's name label: what the rules select on.
        job = service["metadata"]["labels"][monitor["spec"]["jobLabel"]]
        assert job == monitor["metadata"]["name"]
        ports = {port["name"] for port in service["spec"]["ports"]}
        assert [endpoint["port"] for endpoint in monitor["spec"]["endpoints"]] == ["metrics"]
        assert "metrics" in ports


def test_the_main_manifests_do_not_need_the_prometheus_operator() -> None:
    needing = [
        str(path.relative_to(MANIFESTS))
        for path in MANIFESTS.rglob("*.yaml")
        if monitoring.MONITORING_DIR not in path.parents and "monitoring.coreos.com" in path.read_text()
    ]
    assert needing == []


def test_the_dashboard_ships_as_a_configmap_for_grafanas_sidecar() -> None:
    kustomization = yaml.safe_load((monitoring.MONITORING_DIR / "kustomization.yaml").read_text())
    (generated,) = kustomization["configMapGenerator"]
    assert generated["options"]["labels"]["grafana_dashboard"] == "1"
    (entry,) = generated["files"]
    key, _, source = entry.partition("=")
    assert (monitoring.MONITORING_DIR / source).resolve() == monitoring.DASHBOARD
    assert key == "olm.json"
    dashboard = json.loads(monitoring.DASHBOARD.read_text())
    ids = [panel["id"] for panel in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    assert all(
        t["datasource"]["uid"] == "${datasource}" for p in dashboard["panels"] for t in p.get("targets", [])
    )
