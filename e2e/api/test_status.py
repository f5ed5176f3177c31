"""Status: written through the status subresource only, validated like spec, immutable where promised."""

from __future__ import annotations

from typing import Any

import pytest

from e2e.api.conftest import Objects, unique_name
from e2e.api.objects import DELETE, DIGEST, cluster_catalog, cluster_extension, cluster_object_set, with_

pytestmark = pytest.mark.e2e

NOW = "2025-06-01T12:00:00Z"


def condition(
    type_: str, status: str = "True", reason: str = "Succeeded", message: str = ""
) -> dict[str, Any]:
    return {
        "type": type_,
        "status": status,
        "reason": reason,
        "message": message,
        "lastTransitionTime": NOW,
        "observedGeneration": 1,
    }


CE_STATUS = {
    "conditions": [condition("Installed", message="Installed bundle argocd-operator.v0.6.0 successfully")],
    "install": {"bundle": {"name": "argocd-operator.v0.6.0", "version": "0.6.0"}},
    "activeRevisions": [{"name": "argocd-1", "conditions": [condition("Progressing", reason="RollingOut")]}],
}
CC_STATUS = {
    "conditions": [condition("Serving", reason="Available")],
    "resolvedSource": {"type": "Image", "image": {"ref": f"quay.io/operatorhubio/catalog@{DIGEST}"}},
    "urls": {"base": "https://catalogd-service.olmv1-system.svc/catalogs/operatorhubio"},
    "lastUnpacked": NOW,
}
COS_STATUS = {
    "conditions": [condition("Available", reason="ProbesSucceeded")],
    "observedPhases": [{"name": "configuration", "digest": "sha256:" + "0f" * 32}],
}

VALID = [
    pytest.param(cluster_extension, CE_STATUS, id="cluster-extension"),
    pytest.param(cluster_catalog, CC_STATUS, id="cluster-catalog"),
    pytest.param(cluster_object_set, COS_STATUS, id="cluster-object-set"),
]


@pytest.mark.parametrize(("factory", "status"), VALID)
async def test_status_is_written_through_the_subresource_only(
    objects: Objects, request: pytest.FixtureRequest, factory: Any, status: dict[str, Any]
) -> None:
    created = await objects.create(factory(unique_name(request)))
    # The main resource ignores status...
    ignored = await objects.replace(with_(created, ("status", status)))
    assert "status" not in ignored
    # ...the status subresource ignores spec...
    written = await objects.replace_status(
        with_(ignored, ("status", status), ("metadata.labels", {"x": "y"}))
    )
    assert written["status"] == status
    assert written["spec"] == created["spec"]
    assert "labels" not in written["metadata"]
    stored = await objects.get(created["kind"], created["metadata"]["name"])
    assert stored["status"] == status


INVALID = [
    pytest.param(
        cluster_extension,
        with_(CE_STATUS, ("install.bundle.version", "v0.6")),
        "bundle version must be a semantic version",
        id="ce-bundle-version-not-semver",
    ),
    pytest.param(
        cluster_extension,
        with_(CE_STATUS, ("install.bundle.name", "Argo_CD")),
        "bundle name must be a valid DNS-1123 subdomain",
        id="ce-bundle-name",
    ),
    pytest.param(
        cluster_extension,
        with_(CE_STATUS, ("conditions.0.reason", "not a reason")),
        "status.conditions[0].reason: Invalid value",
        id="condition-reason-pattern",
    ),
    pytest.param(
        cluster_extension,
        with_(CE_STATUS, ("conditions.0.lastTransitionTime", DELETE)),
        "status.conditions[0].lastTransitionTime: Required value",
        id="condition-without-time",
    ),
    pytest.param(
        cluster_extension,
        with_(CE_STATUS, ("conditions.0.status", "Yes")),
        "Unsupported value",
        id="condition-status",
    ),
    pytest.param(
        cluster_extension,
        with_(CE_STATUS, ("conditions", [condition("Installed"), condition("Installed", "False", "Failed")])),
        "Duplicate value",
        id="condition-type-twice",
    ),
    pytest.param(
        cluster_extension,
        with_(CE_STATUS, ("conditions.0.message", "m" * 32769)),
        "status.conditions[0].message: Too long",
        id="condition-message-32769",
    ),
    pytest.param(
        cluster_catalog,
        with_(CC_STATUS, ("resolvedSource.image.ref", "quay.io/operatorhubio/catalog:latest")),
        "ref must be a digest reference",
        id="cc-resolved-ref-is-a-tag",
    ),
    pytest.param(
        cluster_catalog,
        with_(CC_STATUS, ("urls.base", "not a url")),
        "base must be a valid URL",
        id="cc-base-not-url",
    ),
    pytest.param(
        cluster_catalog,
        with_(CC_STATUS, ("urls.base", "ftp://catalogd/catalogs/x")),
        "base must use the http or https scheme",
        id="cc-base-ftp",
    ),
    pytest.param(
        cluster_catalog,
        with_(CC_STATUS, ("urls.base", "https://x/" + "a" * 520)),
        "status.urls.base: Too long",
        id="cc-base-526-chars",
    ),
    pytest.param(
        cluster_object_set,
        with_(COS_STATUS, ("observedPhases.0.digest", "SHA256:ABC")),
        "digest must have the form <algorithm>:<lowercase hex>",
        id="cos-digest-format",
    ),
]


@pytest.mark.parametrize(("factory", "status", "expected"), INVALID)
async def test_invalid_status_is_rejected(
    objects: Objects, request: pytest.FixtureRequest, factory: Any, status: dict[str, Any], expected: str
) -> None:
    created = await objects.create(factory(unique_name(request)))
    assert expected in await objects.rejected(with_(created, ("status", status)), status=True)


OBSERVED_PHASE_CHANGES = [
    pytest.param(
        ("status.observedPhases.0.digest", "sha256:" + "1f" * 32), "observedPhases is immutable", id="digest"
    ),
    pytest.param(
        ("status.observedPhases", [*COS_STATUS["observedPhases"], {"name": "deploy", "digest": "sha256:00"}]),
        "observedPhases is immutable",
        id="phase-added",
    ),
    pytest.param(
        ("status.observedPhases", DELETE),
        "observedPhases is immutable once set and cannot be removed",
        id="removed",
    ),
]


@pytest.mark.parametrize(("change", "expected"), OBSERVED_PHASE_CHANGES)
async def test_observed_phases_are_immutable_once_set(
    objects: Objects, request: pytest.FixtureRequest, change: tuple[str, Any], expected: str
) -> None:
    created = await objects.create(cluster_object_set(unique_name(request)))
    written = await objects.replace_status(with_(created, ("status", COS_STATUS)))
    assert expected in await objects.rejected(with_(written, change), status=True)
    # Conditions stay writable.
    rewritten = await objects.replace_status(
        with_(
            written,
            (
                "status.conditions",
                [{**COS_STATUS["conditions"][0], "status": "False", "reason": "ProbeFailure"}],
            ),
        )
    )
    assert rewritten["status"]["observedPhases"] == COS_STATUS["observedPhases"]
