"""Discovery documents parsed into resources, and when the mapper asks the server again."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping
from typing import Any

import orjson
import pytest

from olm_runtime.client import GroupVersionKind, GroupVersionResource, NoKindMatch, RESTMapper, errors
from olm_runtime.client.restmapper import parse_aggregated, parse_resource_list

CORE_AGGREGATED = {
    "kind": "APIGroupDiscoveryList",
    "apiVersion": "apidiscovery.k8s.io/v2",
    "items": [
        {
            "metadata": {"creationTimestamp": None},
            "versions": [
                {
                    "version": "v1",
                    "resources": [
                        {
                            "resource": "pods",
                            "responseKind": {"group": "", "version": "", "kind": "Pod"},
                            "scope": "Namespaced",
                            "singularResource": "pod",
                            "verbs": ["get", "list", "watch", "create"],
                            "subresources": [
                                {"subresource": "status", "responseKind": {"kind": "Pod"}, "verbs": ["get"]},
                                {
                                    "subresource": "eviction",
                                    "responseKind": {"kind": "Eviction"},
                                    "verbs": ["create"],
                                },
                            ],
                        },
                        {
                            "resource": "namespaces",
                            "responseKind": {"group": "", "version": "", "kind": "Namespace"},
                            "scope": "Cluster",
                            "verbs": ["get"],
                        },
                        {"resource": "bindings-without-kind", "scope": "Namespaced", "verbs": ["create"]},
                    ],
                    "freshness": "Current",
                }
            ],
        }
    ],
}


def _groups_aggregated(*groups: tuple[str, str, str, str]) -> dict[str, Any]:
    return {
        "kind": "APIGroupDiscoveryList",
        "apiVersion": "apidiscovery.k8s.io/v2",
        "items": [
            {
                "metadata": {"name": group},
                "versions": [
                    {
                        "version": version,
                        "resources": [
                            {
                                "resource": resource,
                                "responseKind": {"kind": kind},
                                "scope": "Namespaced",
                                "verbs": [],
                            }
                        ],
                    }
                ],
            }
            for group, version, kind, resource in groups
        ],
    }


def test_aggregated_discovery_lists_kinds_scopes_and_subresources() -> None:
    infos = {info.gvk.kind: info for info in parse_aggregated(CORE_AGGREGATED)}
    assert set(infos) == {"Pod", "Namespace"}
    pods = infos["Pod"]
    assert pods.gvk == GroupVersionKind("", "v1", "Pod")
    assert pods.gvr == GroupVersionResource("", "v1", "pods")
    assert pods.namespaced
    assert pods.subresources == {"status", "eviction"}
    assert "create" in pods.verbs
    assert not infos["Namespace"].namespaced


def test_legacy_resource_list_folds_subresources_into_their_resource() -> None:
    document = {
        "kind": "APIResourceList",
        "groupVersion": "apps/v1",
        "resources": [
            {"name": "deployments", "namespaced": True, "kind": "Deployment", "verbs": ["get", "patch"]},
            {
                "name": "deployments/scale",
                "namespaced": True,
                "group": "autoscaling",
                "kind": "Scale",
                "verbs": [],
            },
            {"name": "deployments/status", "namespaced": True, "kind": "Deployment", "verbs": []},
        ],
    }
    [deployments] = parse_resource_list("apps", "v1", document)
    assert deployments.gvk == GroupVersionKind("apps", "v1", "Deployment")
    assert deployments.subresources == {"scale", "status"}
    assert deployments.verbs == {"get", "patch"}


class Discovery:
    """Answers discovery requests from a table that a test can change, counting requests."""

    def __init__(self, documents: Mapping[str, Any]) -> None:
        self.documents = dict(documents)
        self.paths: list[str] = []

    async def request(self, method: str, path: str, **_: Any) -> bytes:
        self.paths.append(path)
        if path not in self.documents:
            raise errors.NotFound(404, "NotFound", f"{path} not found")
        return orjson.dumps(self.documents[path])


WIDGET = GroupVersionKind("example.com", "v1", "Widget")


async def test_aggregated_discovery_is_cached_and_refreshed_once_per_miss() -> None:
    server = Discovery({"/api": CORE_AGGREGATED, "/apis": _groups_aggregated()})
    mapper = RESTMapper(server)
    assert (await mapper.resource_for(GroupVersionKind("", "v1", "Pod"))).gvr.resource == "pods"
    assert (await mapper.resource_for(GroupVersionKind("", "v1", "Namespace"))).gvr.resource == "namespaces"
    assert server.paths == ["/api", "/apis"]  # one discovery for both lookups

    with pytest.raises(NoKindMatch, match=re.escape("example.com/v1, Kind=Widget")):
        await mapper.resource_for(WIDGET)
    assert server.paths == ["/api", "/apis"] * 2  # the miss asked again, once

    server.documents["/apis"] = _groups_aggregated(
        ("example.com", "v1", "Widget", "widgets")
    )  # CRD installed
    assert (await mapper.resource_for(WIDGET)).gvr == GroupVersionResource("example.com", "v1", "widgets")
    assert await mapper.kind_for(GroupVersionResource("example.com", "v1", "widgets")) == WIDGET


async def test_without_aggregated_discovery_only_the_asked_group_version_is_read() -> None:
    legacy_root = {"kind": "APIGroupList", "groups": []}
    server = Discovery(
        {
            "/api": {"kind": "APIVersions", "versions": ["v1"]},
            "/apis": legacy_root,
            "/apis/example.com/v1": {
                "kind": "APIResourceList",
                "resources": [{"name": "widgets", "namespaced": False, "kind": "Widget", "verbs": ["get"]}],
            },
        }
    )
    mapper = RESTMapper(server)
    info = await mapper.resource_for(WIDGET)
    assert not info.namespaced
    assert server.paths == ["/api", "/apis/example.com/v1"]  # /api was not aggregated: fall back for good

    with pytest.raises(NoKindMatch):
        await mapper.resource_for(GroupVersionKind("missing.example.com", "v1", "Thing"))
    assert server.paths[-1] == "/apis/missing.example.com/v1"
    await mapper.resource_for(WIDGET)
    assert server.paths.count("/apis/example.com/v1") == 1  # still cached


async def test_resources_added_by_hand_need_no_server() -> None:
    server = Discovery({})
    mapper = RESTMapper(server)
    pods = parse_aggregated(CORE_AGGREGATED)
    mapper.add(pods)
    assert (await mapper.resource_for(GroupVersionKind("", "v1", "Pod"))).namespaced
    assert server.paths == []
    await mapper.reset()
    with pytest.raises(errors.NotFound):  # forgotten: the mapper asks the (empty) server again
        await mapper.resource_for(GroupVersionKind("", "v1", "Pod"))
    assert server.paths == ["/api"]


class SlowDiscovery(Discovery):
    """Discovery that yields before answering, as a real round trip does, so lookups overlap."""

    async def request(self, method: str, path: str, **kwargs: Any) -> bytes:
        for _ in range(5):
            await asyncio.sleep(0)
        return await super().request(method, path, **kwargs)


async def test_concurrent_misses_share_one_refresh() -> None:
    server = SlowDiscovery({"/api": CORE_AGGREGATED, "/apis": _groups_aggregated()})
    mapper = RESTMapper(server)
    await mapper.resource_for(GroupVersionKind("", "v1", "Pod"))
    server.paths.clear()
    server.documents["/apis"] = _groups_aggregated(("example.com", "v1", "Widget", "widgets"))
    found = await asyncio.gather(*(mapper.resource_for(WIDGET) for _ in range(10)))
    assert {info.gvr.resource for info in found} == {"widgets"}
    assert server.paths == ["/api", "/apis"], "ten concurrent misses read discovery once"
