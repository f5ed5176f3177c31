"""Kinds, resources and the URL paths they are served under."""

from __future__ import annotations

import pytest

from olm_runtime.client import GroupVersionKind, GroupVersionResource, ResourceInfo

CONFIG_MAPS = ResourceInfo(
    gvk=GroupVersionKind("", "v1", "ConfigMap"),
    gvr=GroupVersionResource("", "v1", "configmaps"),
    namespaced=True,
)
DEPLOYMENTS = ResourceInfo(
    gvk=GroupVersionKind("apps", "v1", "Deployment"),
    gvr=GroupVersionResource("apps", "v1", "deployments"),
    namespaced=True,
    subresources=frozenset({"status", "scale"}),
)
NAMESPACES = ResourceInfo(
    gvk=GroupVersionKind("", "v1", "Namespace"),
    gvr=GroupVersionResource("", "v1", "namespaces"),
    namespaced=False,
)
CRDS = ResourceInfo(
    gvk=GroupVersionKind("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
    gvr=GroupVersionResource("apiextensions.k8s.io", "v1", "customresourcedefinitions"),
    namespaced=False,
)


@pytest.mark.parametrize(
    ("info", "kwargs", "path"),
    [
        pytest.param(CONFIG_MAPS, {}, "/api/v1/configmaps", id="core-all-namespaces"),
        pytest.param(
            CONFIG_MAPS, {"namespace": "ns"}, "/api/v1/namespaces/ns/configmaps", id="core-collection"
        ),
        pytest.param(
            CONFIG_MAPS,
            {"namespace": "ns", "name": "a"},
            "/api/v1/namespaces/ns/configmaps/a",
            id="core-object",
        ),
        pytest.param(
            CONFIG_MAPS,
            {"namespace": "ns", "name": "a", "subresource": "status"},
            "/api/v1/namespaces/ns/configmaps/a/status",
            id="core-subresource",
        ),
        pytest.param(
            DEPLOYMENTS,
            {"namespace": "ns", "name": "d", "subresource": "scale"},
            "/apis/apps/v1/namespaces/ns/deployments/d/scale",
            id="group-subresource",
        ),
        pytest.param(DEPLOYMENTS, {}, "/apis/apps/v1/deployments", id="group-all-namespaces"),
        pytest.param(NAMESPACES, {"name": "ns"}, "/api/v1/namespaces/ns", id="cluster-scoped-core"),
        pytest.param(
            NAMESPACES,
            {"name": "ns", "subresource": "finalize"},
            "/api/v1/namespaces/ns/finalize",
            id="namespace-sub",
        ),
        pytest.param(
            CRDS,
            {"name": "w.example.com"},
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/w.example.com",
            id="cluster-scoped-group",
        ),
    ],
)
def test_paths(info: ResourceInfo, kwargs: dict[str, str], path: str) -> None:
    assert info.path(**kwargs) == path


@pytest.mark.parametrize(
    ("info", "kwargs", "message"),
    [
        pytest.param(CRDS, {"namespace": "ns"}, "cluster-scoped", id="namespace-on-cluster-scoped"),
        pytest.param(
            CONFIG_MAPS, {"name": "a"}, "needs a namespace", id="namespaced-object-without-namespace"
        ),
        pytest.param(
            CONFIG_MAPS,
            {"namespace": "ns", "subresource": "status"},
            "needs an object name",
            id="sub-no-name",
        ),
        pytest.param(CONFIG_MAPS, {"namespace": "ns", "name": ""}, "empty name", id="empty-name"),
    ],
)
def test_impossible_paths_raise(info: ResourceInfo, kwargs: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        info.path(**kwargs)


@pytest.mark.parametrize(
    ("api_version", "kind", "gvk"),
    [
        pytest.param("v1", "Pod", GroupVersionKind("", "v1", "Pod"), id="core"),
        pytest.param("apps/v1", "Deployment", GroupVersionKind("apps", "v1", "Deployment"), id="group"),
        pytest.param(
            "olm.operatorframework.io/v1",
            "ClusterExtension",
            GroupVersionKind("olm.operatorframework.io", "v1", "ClusterExtension"),
            id="dotted-group",
        ),
    ],
)
def test_api_version_round_trips(api_version: str, kind: str, gvk: GroupVersionKind) -> None:
    assert GroupVersionKind.from_api_version(api_version, kind) == gvk
    assert gvk.api_version == api_version


@pytest.mark.parametrize("api_version", ["", "apps/", "/"])
def test_malformed_api_version_is_rejected(api_version: str) -> None:
    with pytest.raises(ValueError, match="do not name a kind"):
        GroupVersionKind.from_api_version(api_version, "Thing")


def test_names_are_hashable_values() -> None:
    assert {GroupVersionKind("", "v1", "Pod"), GroupVersionKind("", "v1", "Pod")} == {
        GroupVersionKind("", "v1", "Pod")
    }
    assert str(GroupVersionKind("apps", "v1", "Deployment")) == "apps/v1, Kind=Deployment"
    assert str(GroupVersionResource("", "v1", "pods")) == "v1, Resource=pods"
