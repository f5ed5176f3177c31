"""Updates: what may change after creation, and what the API server refuses to change."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from e2e.api.conftest import Objects, unique_name
from e2e.api.objects import (
    CONDITION_EQUAL,
    DELETE,
    GROUP_KIND_SELECTOR,
    cluster_catalog,
    cluster_extension,
    cluster_object_set,
    configmap,
    probe,
    with_,
)

pytestmark = pytest.mark.e2e

Factory = Callable[[str], dict[str, Any]]
CATALOG = "spec.source.catalog"

UPDATES = [
    pytest.param(cluster_extension, ("spec.namespace", "other"), "namespace is immutable", id="ce-namespace"),
    pytest.param(
        cluster_extension,
        ("spec.serviceAccount.name", "someone-else"),
        "serviceAccount.name is immutable",
        id="ce-service-account",
    ),
    pytest.param(cluster_extension, ("spec.serviceAccount", DELETE), None, id="ce-service-account-cleared"),
    pytest.param(
        cluster_extension, ("spec.serviceAccount.name", DELETE), None, id="ce-service-account-name-cleared"
    ),
    pytest.param(
        cluster_extension,
        (f"{CATALOG}.packageName", "other-operator"),
        "packageName is immutable",
        id="ce-package",
    ),
    pytest.param(cluster_extension, (f"{CATALOG}.version", ">=2.0.0"), None, id="ce-version-may-change"),
    pytest.param(
        cluster_extension, (f"{CATALOG}.channels", ["candidate"]), None, id="ce-channels-may-change"
    ),
    pytest.param(
        cluster_extension,
        (f"{CATALOG}.upgradeConstraintPolicy", "SelfCertified"),
        None,
        id="ce-upgrade-policy-may-change",
    ),
    pytest.param(cluster_extension, ("metadata.labels", {"a": "b"}), None, id="ce-labels-may-change"),
    pytest.param(cluster_object_set, ("spec.revision", 2), "revision is immutable", id="cos-revision"),
    pytest.param(
        cluster_object_set,
        ("spec.collisionProtection", "None"),
        "collisionProtection is immutable",
        id="cos-collision-protection",
    ),
    pytest.param(
        cluster_object_set, ("spec.phases.0.name", "config"), "phases is immutable", id="cos-phase-renamed"
    ),
    pytest.param(
        cluster_object_set,
        ("spec.phases.0.objects.0.object", configmap("other")),
        "phases is immutable",
        id="cos-phase-object-replaced",
    ),
    pytest.param(
        cluster_object_set,
        ("spec.phases.1.collisionProtection", "None"),
        "phases is immutable",
        id="cos-phase-collision-protection",
    ),
    pytest.param(
        cluster_object_set,
        ("spec.phases", DELETE),
        "phases is immutable and cannot be removed",
        id="cos-phases-removed",
    ),
    pytest.param(cluster_object_set, ("spec.lifecycleState", "Archived"), None, id="cos-archive"),
    pytest.param(
        cluster_object_set, ("spec.progressDeadlineMinutes", 15), None, id="cos-deadline-may-change"
    ),
    pytest.param(
        cluster_object_set,
        ("spec.progressionProbes", [probe(GROUP_KIND_SELECTOR, CONDITION_EQUAL)]),
        None,
        id="cos-probes-may-change",
    ),
    pytest.param(
        cluster_catalog, ("spec.source.image.ref", "quay.io/other/catalog:v2"), None, id="cc-ref-may-change"
    ),
    pytest.param(cluster_catalog, ("spec.priority", 100), None, id="cc-priority-may-change"),
]


@pytest.mark.parametrize(("factory", "change", "expected"), UPDATES)
async def test_update(
    objects: Objects,
    request: pytest.FixtureRequest,
    factory: Factory,
    change: tuple[str, Any],
    expected: str | None,
) -> None:
    created = await objects.create(factory(unique_name(request)))
    updated = with_(created, change)
    if expected is None:
        stored = await objects.replace(updated)
        assert with_(stored, ("metadata", DELETE)) == with_(updated, ("metadata", DELETE))
    else:
        assert expected in await objects.rejected(updated, update=True)
        assert (await objects.get(created["kind"], created["metadata"]["name"]))["spec"] == created["spec"]


async def test_a_service_account_may_be_set_on_an_extension_created_without_then_not_changed(
    objects: Objects, request: pytest.FixtureRequest
) -> None:
    created = await objects.create(
        with_(cluster_extension(unique_name(request)), ("spec.serviceAccount", DELETE))
    )
    stored = await objects.replace(with_(created, ("spec.serviceAccount", {"name": "installer"})))
    assert stored["spec"]["serviceAccount"] == {"name": "installer"}
    message = await objects.rejected(with_(stored, ("spec.serviceAccount.name", "someone-else")), update=True)
    assert "serviceAccount.name is immutable" in message


async def test_archived_revision_cannot_be_made_active(
    objects: Objects, request: pytest.FixtureRequest
) -> None:
    created = await objects.create(cluster_object_set(unique_name(request)))
    archived = await objects.replace(with_(created, ("spec.lifecycleState", "Archived")))
    message = await objects.rejected(with_(archived, ("spec.lifecycleState", "Active")), update=True)
    assert "lifecycleState cannot change from Archived" in message
    # Staying archived is fine.
    await objects.replace(with_(archived, ("metadata.labels", {"kept": "archived"})))


async def test_phases_may_be_set_once_on_a_revision_created_without(
    objects: Objects, request: pytest.FixtureRequest
) -> None:
    without = with_(cluster_object_set(unique_name(request)), ("spec.phases", DELETE))
    created = await objects.create(without)
    phases = cluster_object_set("x")["spec"]["phases"]
    stored = await objects.replace(with_(created, ("spec.phases", phases)))
    assert stored["spec"]["phases"] == phases
    message = await objects.rejected(with_(stored, ("spec.phases.0.name", "renamed")), update=True)
    assert "phases is immutable" in message
