"""ClusterCatalogs in tests and benchmarks: build one, push its image, create it, wait until catalogd
serves it (or reaches another state), and delete it so that the next test finds nothing of it.

Every waiter polls with a deadline and, when it times out, shows the catalog's last status.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from olm.api import names
from olm.api.kinds import CLUSTER_CATALOG
from olm_runtime import conditions
from olm_runtime.client import Client, errors
from olm_runtime.testing.poll import eventually
from olm_testkit.images import layout
from olm_testkit.images.layout import Image
from olm_testkit.images.registry import Reference, RegistryClient

__all__ = [
    "catalog_selector",
    "cluster_catalog",
    "delete_catalog",
    "push_catalog",
    "resolved_ref",
    "serve_catalog",
    "serving",
    "wait_catalog",
    "wait_serving",
]


def cluster_catalog(
    name: str,
    ref: str,
    *,
    labels: Mapping[str, str] | None = None,
    poll_minutes: int | None = None,
    name_label: bool = False,
    **spec: Any,
) -> dict[str, Any]:
    """A ClusterCatalog of the image `ref`, as a user writes it. `name_label`: carry the
    `olm.operatorframework.io/metadata.name` label catalogd's webhook sets in a cluster (processes in
    tests run without the webhook registered, and selectors need it); `spec`: more spec fields
    (`priority`, `availabilityMode`, ...)."""
    image: dict[str, Any] = {"ref": ref}
    if poll_minutes is not None:
        image["pollIntervalMinutes"] = poll_minutes
    metadata: dict[str, Any] = {"name": name}
    all_labels = {**({names.METADATA_NAME_LABEL: name} if name_label else {}), **(labels or {})}
    if all_labels:
        metadata["labels"] = all_labels
    return {
        "apiVersion": CLUSTER_CATALOG.api_version,
        "kind": CLUSTER_CATALOG.kind,
        "metadata": metadata,
        "spec": {"source": {"type": "Image", "image": image}, **spec},
    }


def catalog_selector(name: str) -> dict[str, Any]:
    """A LabelSelector picking the ClusterCatalog `name` by its `olm.operatorframework.io/metadata.name`
    label (a ClusterExtension's `spec.source.catalog.selector`)."""
    return {"matchLabels": {names.METADATA_NAME_LABEL: name}}


def push_catalog(pusher: RegistryClient, source: Image | Path, ref: str) -> str:
    """Push `source` (a `layout.catalog_image`, or a File-Based Catalog directory made into one) at
    `ref` (host/repository:tag); its digest reference."""
    image = layout.catalog_image(source) if isinstance(source, Path) else source
    digest = pusher.push(image, Reference.parse(ref))
    return f"{ref.rsplit(':', 1)[0]}@{digest}"


def resolved_ref(catalog: Mapping[str, Any]) -> str | None:
    """The digest reference the catalog last unpacked (`status.resolvedSource.image.ref`)."""
    return (((catalog.get("status") or {}).get("resolvedSource") or {}).get("image") or {}).get("ref")


def serving(catalog: Mapping[str, Any], ref: str | None = None) -> bool:
    """Whether the catalog is `Serving` (that digest reference, when `ref` is given)."""
    ok = conditions.of(catalog, "Serving").get("status") == "True"
    return ok and (ref is None or resolved_ref(catalog) == ref)


async def wait_catalog(
    kube: Client,
    name: str,
    what: str,
    check: Callable[[dict[str, Any]], bool],
    *,
    timeout: float = 120.0,
) -> dict[str, Any]:
    """Until `check(catalog)` holds; the catalog."""
    found: dict[str, Any] = {}

    async def done() -> bool:
        nonlocal found
        found = dict(await kube.get(CLUSTER_CATALOG, name))
        return check(found)

    try:
        await eventually(done, what=f"ClusterCatalog {name}: {what}", timeout=timeout)
    except AssertionError as error:
        raise AssertionError(f"{error}; last status: {json.dumps(found.get('status'), indent=1)}") from None
    return found


async def wait_serving(
    kube: Client, name: str, ref: str | None = None, *, timeout: float = 120.0
) -> dict[str, Any]:
    """Until the catalog is Serving (`ref`, when given); the catalog."""
    return await wait_catalog(kube, name, f"Serving {ref or ''}", lambda c: serving(c, ref), timeout=timeout)


async def serve_catalog(kube: Client, obj: Mapping[str, Any], *, timeout: float = 120.0) -> dict[str, Any]:
    """Create the ClusterCatalog `obj` and wait until it is Serving; the catalog."""
    await kube.create(obj)
    return await wait_serving(kube, obj["metadata"]["name"], timeout=timeout)


async def delete_catalog(kube: Client, name: str, *, timeout: float = 60.0) -> None:
    """Delete and wait until catalogd dropped its finalizer (so call it while catalogd runs)."""
    with contextlib.suppress(errors.NotFound):
        await kube.delete(CLUSTER_CATALOG, name)

    async def gone() -> bool:
        try:
            await kube.get(CLUSTER_CATALOG, name)
        except errors.NotFound:
            return True
        return False

    await eventually(gone, what=f"ClusterCatalog {name} to be deleted", timeout=timeout)
