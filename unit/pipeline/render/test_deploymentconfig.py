"""deploymentConfig merging rules (OLM v0's SubscriptionConfig, upstream's merge-by-name changes)."""

from __future__ import annotations

from typing import Any

import pytest

from olm.pipeline import render
from unit.pipeline.render import samples


def _render(config: dict[str, Any], **pod: Any) -> dict[str, Any]:
    rv1 = samples.make(deployments=[samples.deployment(**pod)])
    objects = render.manifests_for(rv1, "ns", {"deploymentConfig": config}, certificate_provider=None)
    [deployment] = [o for o in objects if o["kind"] == "Deployment"]
    return deployment


def _pod(config: dict[str, Any], **pod: Any) -> dict[str, Any]:
    spec: dict[str, Any] = _render(config, **pod)["spec"]["template"]["spec"]
    return spec


@pytest.mark.parametrize(
    ("config", "expected_manager_env"),
    [
        pytest.param(
            {"env": [{"name": "A", "value": "2"}]}, [{"name": "A", "value": "2"}], id="override-by-name"
        ),
        pytest.param(
            {"env": [{"name": "B", "value": "x"}]},
            [{"name": "A", "value": "1"}, {"name": "B", "value": "x"}],
            id="append-new",
        ),
        pytest.param({"env": []}, [{"name": "A", "value": "1"}], id="empty-is-no-op"),
    ],
)
def test_env(config: dict[str, Any], expected_manager_env: list[dict[str, Any]]) -> None:
    pod = _pod(config)
    assert pod["containers"][0]["env"] == expected_manager_env
    sidecar_expected = [e for e in config["env"]] or None
    assert pod["containers"][1].get("env") == sidecar_expected, "every container gets the variables"


def test_env_from_is_appended_without_duplicates() -> None:
    existing = [{"configMapRef": {"name": "a"}}]
    pod = _pod(
        {"envFrom": [{"configMapRef": {"name": "a"}}, {"secretRef": {"name": "s"}}]},
        containers=[{"name": "c", "image": "i", "envFrom": existing}],
    )
    assert pod["containers"][0]["envFrom"] == [{"configMapRef": {"name": "a"}}, {"secretRef": {"name": "s"}}]


def test_volumes_and_mounts_merge_by_name() -> None:
    pod = _pod(
        {
            "volumes": [{"name": "data", "emptyDir": {}}, {"name": "extra", "configMap": {"name": "cm"}}],
            "volumeMounts": [{"name": "data", "mountPath": "/new"}],
        },
        volumes=[{"name": "data", "secret": {"secretName": "old"}}],
        containers=[{"name": "c", "image": "i", "volumeMounts": [{"name": "data", "mountPath": "/old"}]}],
    )
    assert pod["volumes"] == [
        {"name": "data", "emptyDir": {}},
        {"name": "extra", "configMap": {"name": "cm"}},
    ]
    assert pod["containers"][0]["volumeMounts"] == [{"name": "data", "mountPath": "/new"}]


def test_tolerations_are_appended_without_duplicates() -> None:
    toleration = {"key": "k", "operator": "Exists", "effect": "NoSchedule"}
    pod = _pod(
        {"tolerations": [toleration, {"key": "other", "operator": "Exists"}]}, tolerations=[toleration]
    )
    assert pod["tolerations"] == [toleration, {"key": "other", "operator": "Exists"}]


def test_resources_replace_every_container_and_are_canonical() -> None:
    pod = _pod({"resources": {"limits": {"cpu": "2000m", "memory": "1024Mi"}}})
    assert [c["resources"] for c in pod["containers"]] == [{"limits": {"cpu": "2", "memory": "1Gi"}}] * 2


@pytest.mark.parametrize(
    ("config", "existing", "expected"),
    [
        pytest.param(
            {"kubernetes.io/os": "linux"}, {"zone": "a"}, {"kubernetes.io/os": "linux"}, id="replace"
        ),
        pytest.param({}, {"zone": "a"}, None, id="empty-clears"),
    ],
)
def test_node_selector(
    config: dict[str, str], existing: dict[str, str], expected: dict[str, str] | None
) -> None:
    assert _pod({"nodeSelector": config}, nodeSelector=existing).get("nodeSelector") == expected


NODE = {
    "requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchFields": [{"key": "k", "operator": "Exists"}]}]
    }
}
POD = {"requiredDuringSchedulingIgnoredDuringExecution": [{"topologyKey": "t"}]}


@pytest.mark.parametrize(
    ("config", "existing", "expected"),
    [
        pytest.param({}, {"nodeAffinity": NODE}, None, id="empty-erases"),
        pytest.param(
            {"podAffinity": POD},
            {"nodeAffinity": NODE},
            {"nodeAffinity": NODE, "podAffinity": POD},
            id="add-part",
        ),
        pytest.param(
            {"nodeAffinity": {}},
            {"nodeAffinity": NODE, "podAffinity": POD},
            {"podAffinity": POD},
            id="erase-part",
        ),
        pytest.param({"nodeAffinity": {}}, {"nodeAffinity": NODE}, None, id="erase-last-part"),
        pytest.param({"podAntiAffinity": POD}, None, {"podAntiAffinity": POD}, id="onto-nothing"),
    ],
)
def test_affinity(
    config: dict[str, Any], existing: dict[str, Any] | None, expected: dict[str, Any] | None
) -> None:
    pod = _pod({"affinity": config}, **({"affinity": existing} if existing else {}))
    assert pod.get("affinity") == expected


def test_absent_affinity_leaves_it_alone() -> None:
    assert _pod({"annotations": {"a": "b"}}, affinity={"nodeAffinity": NODE})["affinity"] == {
        "nodeAffinity": NODE
    }


def test_annotations_never_override_existing_ones() -> None:
    deployment = _render({"annotations": {"capabilities": "changed", "team": "a"}})
    assert deployment["metadata"]["annotations"] == {"capabilities": "changed", "team": "a"}
    template = deployment["spec"]["template"]["metadata"]["annotations"]
    assert template["capabilities"] == "Basic Install", "the CSV annotation already on the pod wins"
    assert template["team"] == "a"


def test_no_config_changes_nothing() -> None:
    rv1 = samples.make()
    plain = render.render(rv1, "ns")
    assert render.render(rv1, "ns", deployment_config=render.parse_deployment_config({})) == plain
