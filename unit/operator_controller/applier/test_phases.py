"""The phase table: every kind OLM renders has its phase; unknown kinds deploy; order is stable."""

from __future__ import annotations

import random
from typing import Any

import pytest

from olm.operator_controller import applier
from olm.pipeline import render
from unit import realdata

RENDERED_BEYOND_SUPPORTED = {
    "Deployment",
    "ValidatingWebhookConfiguration",
    "MutatingWebhookConfiguration",
    "Issuer",
    "Certificate",
}


def _obj(api_version: str, kind: str, name: str = "x", namespace: str | None = None) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if namespace is not None:
        metadata["namespace"] = namespace
    return {"apiVersion": api_version, "kind": kind, "metadata": metadata}


def test_every_supported_kind_has_a_phase() -> None:
    named = {gk.kind for phase in applier.PHASES for gk in phase.kinds}
    kinds = (set(render.SUPPORTED_KINDS) - {"ClusterServiceVersion"}) | RENDERED_BEYOND_SUPPORTED
    assert sorted(kinds - named) == []


def test_phase_names_are_unique_and_thirteen() -> None:
    names = [phase.name for phase in applier.PHASES]
    assert names == [
        "namespaces",
        "policies",
        "identity",
        "configuration",
        "storage",
        "crds",
        "roles",
        "bindings",
        "infrastructure",
        "deploy",
        "scaling",
        "publish",
        "admission",
    ]


def test_each_group_kind_is_in_one_phase() -> None:
    seen: dict[applier.GroupKind, str] = {}
    for phase in applier.PHASES:
        for gk in phase.kinds:
            assert gk not in seen, f"{gk} in {seen[gk]} and {phase.name}"
            seen[gk] = phase.name


@pytest.mark.parametrize(
    ("api_version", "kind", "phase"),
    [
        pytest.param("v1", "Namespace", "namespaces", id="namespace"),
        pytest.param("policy/v1", "PodDisruptionBudget", "policies", id="pdb"),
        pytest.param("v1", "ServiceAccount", "identity", id="service-account"),
        pytest.param("v1", "ConfigMap", "configuration", id="configmap"),
        pytest.param("apiextensions.k8s.io/v1", "CustomResourceDefinition", "crds", id="crd"),
        pytest.param("rbac.authorization.k8s.io/v1", "Role", "roles", id="role"),
        pytest.param("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "bindings", id="binding"),
        pytest.param("cert-manager.io/v1", "Certificate", "infrastructure", id="certificate-before-deploy"),
        pytest.param("apps/v1", "Deployment", "deploy", id="deployment"),
        pytest.param("example.com/v1", "Widget", "deploy", id="unknown-kind-deploys"),
        pytest.param("v2", "ServiceAccount", "identity", id="version-does-not-matter"),
        pytest.param("example.com/v1", "ServiceAccount", "deploy", id="group-matters"),
        pytest.param("autoscaling.k8s.io/v1", "VerticalPodAutoscaler", "scaling", id="vpa"),
        pytest.param("monitoring.coreos.com/v1", "ServiceMonitor", "publish", id="service-monitor"),
        pytest.param(
            "admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", "admission", id="webhook"
        ),
    ],
)
def test_phase_of(api_version: str, kind: str, phase: str) -> None:
    assert applier.phase_of(_obj(api_version, kind)) == phase


def test_sort_into_phases_is_independent_of_input_order() -> None:
    objects = [
        _obj("apps/v1", "Deployment", "b", "ns"),
        _obj("apps/v1", "Deployment", "a", "ns"),
        _obj("v1", "Service", "svc", "ns"),
        _obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", "w.example.com"),
        _obj("example.com/v1", "Widget", "w", "ns"),
    ]
    expected = applier.sort_into_phases(objects)
    assert [name for name, _ in expected] == ["crds", "infrastructure", "deploy"]
    deploy = [(o["kind"], o["metadata"]["name"]) for o in expected[2][1]]
    assert deploy == [("Deployment", "a"), ("Deployment", "b"), ("Widget", "w")]
    for seed in range(5):
        shuffled = list(objects)
        random.Random(seed).shuffle(shuffled)
        assert applier.sort_into_phases(shuffled) == expected


def test_real_bundle_render_lands_in_known_phases() -> None:
    realdata.require()
    rv1 = realdata.load(realdata.BUNDLES / "kube-green" / "0.7.1")
    objects = render.manifests_for(rv1, "kube-green", None, certificate_provider=render.CertManagerProvider())
    phases = dict(applier.sort_into_phases(objects))
    assert sum(len(v) for v in phases.values()) == len(objects)
    assert next(iter(phases)) == "identity"
    assert list(phases)[-1] == "admission"
    assert all(o["kind"] == "Deployment" for o in phases["deploy"])
