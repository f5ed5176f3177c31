"""ClusterCatalog admission: image references, polling, priority and availability."""

from __future__ import annotations

from typing import Any

import pytest

from e2e.api.conftest import Objects, unique_name
from e2e.api.objects import DELETE, DIGEST, cluster_catalog, with_

pytestmark = pytest.mark.e2e

REF = "spec.source.image.ref"
POLL = "spec.source.image.pollIntervalMinutes"
UNSUPPORTED = "Unsupported value"
BAD_TAG = "tag is invalid: it must start with a letter, digit or '_'"
BAD_DIGEST = "digest is invalid: after the algorithm and ':' it must have at least 32 hexadecimal"

CASES = [
    pytest.param(((REF, "quay.io/operatorhubio/catalog:latest"),), None, id="tag"),
    pytest.param(((REF, f"quay.io/operatorhubio/catalog@{DIGEST}"),), None, id="digest"),
    pytest.param(((REF, f"quay.io/operatorhubio/catalog:v1@{DIGEST}"),), None, id="tag-and-digest"),
    pytest.param(((REF, "localhost:5000/catalogs/test-catalog:v1.0.0"),), None, id="domain-with-port"),
    pytest.param(((REF, "127.0.0.1:5000/olm/e2e_catalog__v2:1.2.3-rc_1"),), None, id="ip-port-separators"),
    pytest.param(((REF, "registry.example.com/a/b/c/catalog:" + "t" * 128),), None, id="tag-128-chars"),
    pytest.param(
        ((REF, "quay.io/operatorhubio/catalog"),), "ref must end with a tag", id="neither-tag-nor-digest"
    ),
    pytest.param(((REF, "localhost:5000/catalog"),), "ref must end with a tag", id="port-is-not-a-tag"),
    pytest.param(((REF, "catalog:latest"),), "ref must start with a registry domain", id="no-domain"),
    pytest.param(
        ((REF, "-quay.io/catalog:latest"),),
        "ref must start with a registry domain",
        id="domain-leading-hyphen",
    ),
    pytest.param(
        ((REF, "quay.io/OperatorHubIO/catalog:latest"),), "ref must name a repository", id="path-uppercase"
    ),
    pytest.param(
        ((REF, "quay.io//catalog:latest"),), "ref must name a repository", id="path-empty-component"
    ),
    pytest.param(
        ((REF, "quay.io/catalog-:latest"),), "ref must name a repository", id="path-trailing-hyphen"
    ),
    pytest.param(((REF, "quay.io/catalog:-bad"),), BAD_TAG, id="tag-leading-hyphen"),
    pytest.param(((REF, "quay.io/catalog:v1:v2"),), BAD_TAG, id="tag-with-colon"),
    pytest.param(
        ((REF, "quay.io/catalog:" + "t" * 129),),
        "it must not be longer than 128 characters",
        id="tag-129-chars",
    ),
    pytest.param(((REF, "quay.io/catalog@sha256:abc123"),), BAD_DIGEST, id="digest-short"),
    pytest.param(((REF, "quay.io/catalog@sha256:" + "g" * 64),), BAD_DIGEST, id="digest-not-hex"),
    pytest.param(
        ((REF, "quay.io/catalog@1sha:" + "a" * 64),), "digest algorithm is invalid", id="digest-bad-algorithm"
    ),
    pytest.param(((REF, "quay.io/" + "a" * 990 + ":latest"),), f"{REF}: Too long", id="ref-1001-chars"),
    pytest.param(((REF, DELETE),), f"{REF}: Required value", id="ref-missing"),
    pytest.param(((POLL, 10),), None, id="poll-with-tag"),
    pytest.param(
        ((REF, f"quay.io/operatorhubio/catalog@{DIGEST}"), (POLL, 10)),
        "pollIntervalMinutes must not be set when ref is a digest reference",
        id="poll-with-digest",
    ),
    pytest.param(((POLL, 0),), "should be greater than or equal to 1", id="poll-zero"),
    pytest.param((("spec.priority", -2147483648),), None, id="priority-int32-min"),
    pytest.param((("spec.priority", 2147483647),), None, id="priority-int32-max"),
    pytest.param(
        (("spec.priority", 2147483648),),
        "should be less than or equal to 2147483647",
        id="priority-over-int32",
    ),
    pytest.param((("spec.availabilityMode", "Unavailable"),), None, id="availability-unavailable"),
    pytest.param((("spec.availabilityMode", "Paused"),), UNSUPPORTED, id="availability-unknown"),
    pytest.param((("spec.source.type", "image"),), UNSUPPORTED, id="source-type-v1alpha1-lowercase"),
    pytest.param(
        (("spec.source.image", DELETE),), "image is required when type is Image", id="image-missing"
    ),
    pytest.param((("spec", DELETE),), "spec: Required value", id="spec-missing"),
]


@pytest.mark.parametrize(("changes", "expected"), CASES)
async def test_admission(
    objects: Objects,
    request: pytest.FixtureRequest,
    changes: tuple[tuple[str, Any], ...],
    expected: str | None,
) -> None:
    await objects.check(with_(cluster_catalog(unique_name(request)), *changes), expected)


async def test_defaults_are_applied(objects: Objects, request: pytest.FixtureRequest) -> None:
    created = await objects.create(cluster_catalog(unique_name(request)))
    assert created["spec"]["priority"] == 0
    assert created["spec"]["availabilityMode"] == "Available"
