"""The renderer reproduces upstream's golden regression output object for object, names included.

Cases and inputs are those of upstream's `test/regression/convert/generate-manifests.go`; the expected
objects are read unchanged from `../shared/realdata/golden/`. Only ordering is normalised.
"""

from __future__ import annotations

from typing import Any

import pytest

from olm.compat import kubeyaml
from olm.pipeline import render
from unit import realdata

DEPLOYMENT_CONFIG_OPTIONS: dict[str, Any] = {
    "nodeSelector": {"kubernetes.io/os": "linux"},
    "tolerations": [
        {"key": "some/key", "operator": "Equal", "effect": "NoSchedule"},
        {"key": "someother/key", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 120},
    ],
    "resources": {
        "requests": {"cpu": "100m", "memory": "128Mi"},
        "limits": {"cpu": "500m", "memory": "512Mi"},
    },
    "env": [{"name": "CUSTOM_ENV_VAR", "value": "custom-value"}, {"name": "LOG_LEVEL", "value": "debug"}],
    "envFrom": [
        {"prefix": "test"},
        {"configMapRef": {"name": "configmapForTest"}},
        {"secretRef": {"name": "secretForTest"}},
    ],
    "volumes": [
        {"name": "test-configmap-volume", "configMap": {"name": "testVolumeConfigMap"}},
        {"name": "test-emptydir-volume", "emptyDir": {}},
    ],
    "volumeMounts": [{"name": "test-configmap-volume", "mountPath": "/test-volume-mount", "readOnly": True}],
    "affinity": {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]}
                        ],
                        "matchFields": [{"key": "key", "operator": "In", "values": ["val1", "val2"]}],
                    }
                ]
            }
        },
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {"matchLabels": {"app.kubernetes.io/name": "test-app"}},
                    "topologyKey": "topKey",
                    "namespaces": ["test", "test2"],
                }
            ]
        },
        "podAntiAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 100,
                    "podAffinityTerm": {
                        "labelSelector": {"matchLabels": {"app.kubernetes.io/name": "test-app-2"}},
                        "topologyKey": "topKey2",
                    },
                }
            ]
        },
    },
    "annotations": {"foo": "bar", "testkey": "testval"},
}

ARGOCD, WEBHOOK = "argocd-operator.v0.6.0", "webhook-operator.v0.0.5"
CASES = [
    pytest.param(ARGOCD, "all-namespaces", "argocd-system", {}, id="argocd-all-namespaces"),
    pytest.param(
        ARGOCD, "single-namespace", "argocd-system", {"watchNamespace": "argocd-watch"}, id="argocd-single"
    ),
    pytest.param(
        ARGOCD, "own-namespace", "argocd-system", {"watchNamespace": "argocd-system"}, id="argocd-own"
    ),
    pytest.param(WEBHOOK, "all-webhook-types", "webhook-system", {}, id="webhook-all-webhook-types"),
    pytest.param(
        ARGOCD,
        "with-deploymentconfig-options",
        "argocd-system",
        {"deploymentConfig": DEPLOYMENT_CONFIG_OPTIONS},
        id="argocd-deploymentconfig-options",
    ),
    pytest.param(
        ARGOCD,
        "with-empty-affinity",
        "argocd-system",
        {"deploymentConfig": {"affinity": {}}},
        id="argocd-empty-affinity",
    ),
    pytest.param(
        ARGOCD,
        "with-empty-affinity-subtype",
        "argocd-system",
        {"deploymentConfig": {"affinity": {"nodeAffinity": {}}}},
        id="argocd-empty-affinity-subtype",
    ),
]


def _key(obj: dict[str, Any]) -> tuple[str, str, str]:
    return obj["kind"], obj["metadata"].get("namespace", ""), obj["metadata"]["name"]


@pytest.mark.parametrize(("bundle_name", "case", "namespace", "config"), CASES)
def test_golden(bundle_name: str, case: str, namespace: str, config: dict[str, Any]) -> None:
    realdata.require()
    rv1 = realdata.load(realdata.GOLDEN / "bundles" / bundle_name)
    parsed = render.parse_config(rv1.csv, config, namespace)
    # Upstream's generator passes the watch namespace as given ("" for all namespaces) and no
    # certificate provider, so webhook objects come without certificates.
    objects = render.render(
        rv1,
        namespace,
        target_namespaces=[parsed.watch_namespace or ""],
        deployment_config=parsed.deployment_config,
    )
    expected = [
        kubeyaml.load_documents(path.read_bytes(), path.name)[0]
        for path in sorted((realdata.GOLDEN / "expected-manifests" / bundle_name / case).glob("*.yaml"))
    ]
    assert len(expected) >= 10
    assert [_key(o) for o in sorted(objects, key=_key)] == [_key(o) for o in sorted(expected, key=_key)]
    for got, want in zip(sorted(objects, key=_key), sorted(expected, key=_key), strict=True):
        assert got == want, f"{_key(want)} differs"
