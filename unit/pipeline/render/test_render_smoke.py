"""Every real bundle renders through the front door, and the output keeps basic promises."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from olm.pipeline import render
from unit import realdata

NAMESPACE = "olm-smoke"
BROKEN = realdata.FIXTURES / "test-operator" / "v1.0.3"
NAMESPACED = {"ServiceAccount", "Deployment", "Service", "Issuer", "Certificate"}
NAMESPACED |= {
    "ConfigMap",
    "Secret",
    "NetworkPolicy",
    "ServiceMonitor",
    "PrometheusRule",
    "PodDisruptionBudget",
}
CLUSTER_SCOPED = {"ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition", "PriorityClass"}


def _config(modes: frozenset[str]) -> dict[str, Any] | None:
    if "AllNamespaces" in modes:
        return None
    return {"watchNamespace": NAMESPACE if "OwnNamespace" in modes else "olm-watched"}


@pytest.mark.parametrize(
    "path", [p for p in realdata.bundle_dirs() if p != BROKEN], ids=lambda p: f"{p.parent.name}-{p.name}"
)
def test_renders_with_invariants(path: Path) -> None:
    rv1 = realdata.load(path)
    config = _config(rv1.csv.supported_install_modes)
    objects = render.manifests_for(rv1, NAMESPACE, config, certificate_provider=render.CertManagerProvider())
    watched = config["watchNamespace"] if config else ""
    keys = [
        (o["apiVersion"], o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"])
        for o in objects
    ]
    assert len(keys) == len(set(keys)), "an object is rendered twice"
    orjson.dumps(objects)  # plain JSON values only
    for obj in objects:
        name, kind = obj["metadata"]["name"], obj["kind"]
        assert 0 < len(name) <= 253
        if kind in NAMESPACED:
            assert obj["metadata"]["namespace"] == NAMESPACE, (kind, name)
        if kind in CLUSTER_SCOPED:
            assert "namespace" not in obj["metadata"], (kind, name)
        if kind in {"Role", "RoleBinding"}:
            assert obj["metadata"]["namespace"] == watched, "namespaced RBAC goes to the watched namespace"
        if kind in {"Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding"}:
            assert len(name) <= 63
    deployments = [o for o in objects if o["kind"] == "Deployment"]
    assert [d["metadata"]["name"] for d in deployments] == [d.name for d in rv1.csv.deployments]
    for deployment in deployments:
        annotations = deployment["spec"]["template"]["metadata"]["annotations"]
        assert annotations["olm.operatorNamespace"] == NAMESPACE
        assert "olm.targetNamespaces" in annotations
        assert deployment["spec"]["revisionHistoryLimit"] == 1
        for container in deployment["spec"]["template"]["spec"]["containers"]:
            assert "resources" in container
    crds = {o["metadata"]["name"] for o in objects if o["kind"] == "CustomResourceDefinition"}
    assert crds == {c["metadata"]["name"] for c in rv1.crds}
    generated = {(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]) for o in objects}
    accounts = {o["metadata"]["name"] for o in objects if o["kind"] == "ServiceAccount"} | {"default"}
    for binding in (o for o in objects if o["kind"] in {"RoleBinding", "ClusterRoleBinding"}):
        role = (binding["roleRef"]["kind"], binding["metadata"].get("namespace"), binding["roleRef"]["name"])
        if binding["metadata"]["name"] == binding["roleRef"]["name"]:  # generated from the CSV
            assert role in generated, f"{binding['metadata']['name']} binds a role that is not rendered"
            assert binding["subjects"][0]["name"] in accounts
            assert binding["subjects"][0]["namespace"] == NAMESPACE
    if rv1.csv.webhook_definitions:
        kinds = {o["kind"] for o in objects}
        assert {"Issuer", "Certificate", "Service"} <= kinds
        for obj in objects:
            if obj["kind"].endswith("WebhookConfiguration"):
                injected = obj["metadata"]["annotations"][render.CERT_MANAGER_INJECT_CA_ANNOTATION]
                assert injected.startswith(f"{NAMESPACE}/")


def test_the_broken_fixture_fails_with_a_clear_message() -> None:
    realdata.require()
    rv1 = realdata.load(BROKEN)
    with pytest.raises(render.RenderError) as err:
        render.manifests_for(rv1, NAMESPACE, None, certificate_provider=render.CertManagerProvider())
    assert str(err.value) == (
        'ConfigMap "wrong-test-configmap" has unknown field "wrongfield": the API server would reject it'
    )
