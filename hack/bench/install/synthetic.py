"""Small synthetic registry+v1 bundles: one package, one CRD and one Deployment each.

`write_bundle(root, index)` writes `root/<package>/` with `manifests/` (a CSV supporting only
`AllNamespaces`, a CRD of its own group, and a ServiceAccount's permissions) and
`metadata/annotations.yaml`. Written as JSON (which is YAML), so nothing depends on an emitter.
The Deployment's image is never pulled: the control plane's nodes are kwok nodes. `publish` pushes
them as one catalog; `install` creates their ClusterExtensions and times them to Installed.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from hack.bench.cluster import installer_namespace
from olm.api.kinds import CLUSTER_EXTENSION
from olm_runtime import conditions
from olm_runtime.client import Client
from olm_runtime.testing.poll import eventually
from olm_testkit.catalogs import catalog_selector
from olm_testkit.extensions import extension_object
from olm_testkit.images import realdata
from olm_testkit.images.registry import RegistryClient

VERSION = "1.0.0"
CHANNEL = "stable"
IMAGE = "registry.k8s.io/pause:3.10"


def package_name(index: int) -> str:
    return f"bench-synthetic-{index:02d}"


def _crd(group: str, plural: str, kind: str) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "names": {"kind": kind, "listKind": f"{kind}List", "plural": plural, "singular": kind.lower()},
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                            },
                        }
                    },
                }
            ],
        },
    }


def _csv(package: str, group: str, plural: str, kind: str) -> dict[str, Any]:
    account = f"{package}-controller"
    labels = {"app": package}
    return {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "ClusterServiceVersion",
        "metadata": {"name": f"{package}.v{VERSION}", "namespace": "placeholder"},
        "spec": {
            "displayName": package,
            "version": VERSION,
            "installModes": [
                {"type": "OwnNamespace", "supported": False},
                {"type": "SingleNamespace", "supported": False},
                {"type": "MultiNamespace", "supported": False},
                {"type": "AllNamespaces", "supported": True},
            ],
            "customresourcedefinitions": {
                "owned": [{"name": f"{plural}.{group}", "kind": kind, "version": "v1", "displayName": kind}]
            },
            "install": {
                "strategy": "deployment",
                "spec": {
                    "deployments": [
                        {
                            "name": f"{package}-controller",
                            "spec": {
                                "replicas": 1,
                                "selector": {"matchLabels": labels},
                                "template": {
                                    "metadata": {"labels": labels},
                                    "spec": {
                                        "serviceAccountName": account,
                                        "containers": [{"name": "manager", "image": IMAGE}],
                                    },
                                },
                            },
                        }
                    ],
                    "clusterPermissions": [
                        {
                            "serviceAccountName": account,
                            "rules": [
                                {
                                    "apiGroups": [group],
                                    "resources": [plural],
                                    "verbs": ["get", "list", "watch"],
                                }
                            ],
                        }
                    ],
                    "permissions": [
                        {
                            "serviceAccountName": account,
                            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}],
                        }
                    ],
                },
            },
        },
    }


def write_bundle(root: Path, index: int) -> Path:
    """Write bundle number `index` under `root`; its directory."""
    package = package_name(index)
    group = f"synthetic{index:02d}.bench.olm-py.io"
    kind, plural = f"Widget{index:02d}", f"widget{index:02d}s"
    directory = root / package
    (directory / "manifests").mkdir(parents=True)
    (directory / "metadata").mkdir()
    (directory / "manifests" / f"{package}.clusterserviceversion.yaml").write_text(
        json.dumps(_csv(package, group, plural, kind))
    )
    (directory / "manifests" / f"{plural}.{group}.crd.yaml").write_text(json.dumps(_crd(group, plural, kind)))
    annotations = {
        "annotations": {
            "operators.operatorframework.io.bundle.mediatype.v1": "registry+v1",
            "operators.operatorframework.io.bundle.manifests.v1": "manifests/",
            "operators.operatorframework.io.bundle.metadata.v1": "metadata/",
            "operators.operatorframework.io.bundle.package.v1": package,
            "operators.operatorframework.io.bundle.channels.v1": CHANNEL,
        }
    }
    (directory / "metadata" / "annotations.yaml").write_text(json.dumps(annotations))
    return directory


def publish(pusher: RegistryClient, workdir: Path, count: int) -> realdata.PublishedCatalog:
    """`count` synthetic packages, written under a fresh directory of `workdir`, pushed as the
    catalog `bench/synthetic` with every bundle."""
    root = Path(tempfile.mkdtemp(prefix="bench-synthetic-", dir=workdir))
    packages = [
        realdata.CustomPackage(
            name=package_name(i),
            channel=CHANNEL,
            bundles=(realdata.CustomBundle(version=VERSION, source=write_bundle(root, i)),),
        )
        for i in range(count)
    ]
    return realdata.publish_custom_catalog(
        pusher, pusher.host, packages=packages, repository_prefix="bench/synthetic"
    )


async def install(
    kube: Client,
    count: int,
    catalog: str,
    make_account: Callable[[Client, str], Awaitable[str]] = installer_namespace,
    *,
    first: int = 0,
    timeout: float = 600.0,
    interval: float = 0.1,
) -> tuple[list[str], float]:
    """Create the ClusterExtensions of synthetic packages `first`..`count - 1` of `catalog` at once,
    each in a namespace of its name whose installer ServiceAccount `make_account` makes; the names
    of all `count` (those of earlier calls included) and the seconds from the first create until
    all of them are Installed (polled every `interval`)."""
    names = [f"bench-{package_name(i)}" for i in range(count)]
    accounts = {i: await make_account(kube, names[i]) for i in range(first, count)}
    started = time.perf_counter()
    for i, account in accounts.items():
        await kube.create(
            extension_object(names[i], package_name(i), names[i], account, selector=catalog_selector(catalog))
        )

    async def all_installed() -> bool:
        listed = await kube.list(CLUSTER_EXTENSION)
        installed = {
            item["metadata"]["name"]
            for item in listed.items
            if conditions.of(dict(item), "Installed").get("status") == "True"
        }
        return installed.issuperset(names)

    await eventually(
        all_installed,
        what=f"{count} synthetic extensions to be Installed",
        timeout=timeout,
        interval=interval,
    )
    return names, time.perf_counter() - started
