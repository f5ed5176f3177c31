"""Hostile ClusterExtension and ClusterCatalog specs against the real API server.

Each named case is one malformed or malicious object: wrong types, huge strings, names and references
the schema or a CEL rule refuses, unknown fields. The expected outcome is the API server's answer: a
rejection (HTTP status and a substring of its message) after which no object exists, or acceptance,
with unknown fields pruned rather than stored. `test_clusterextension_admission.py` and
`test_clustercatalog_admission.py` hold the rule-by-rule cases; nothing here repeats them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from kubernetes_asyncio.client.exceptions import ApiException

from e2e.api.conftest import PLURALS, Objects, rejection, unique_name
from e2e.api.objects import DELETE, DIGEST, cluster_catalog, cluster_extension, with_
from olm.api import names

pytestmark = pytest.mark.e2e

MiB = 1 << 20
NAME = "a lowercase RFC 1123 subdomain must consist of"
NAME_LONG = "must be no more than 253 characters"
UNSUPPORTED = "Unsupported value"
CATALOG = "spec.source.catalog"
REF = "spec.source.image.ref"
POLL = "spec.source.image.pollIntervalMinutes"
NS_LABEL = "namespace must be a valid DNS-1123 label"
SA_NAME = "serviceAccount.name must be a valid DNS-1123 subdomain"
PACKAGE = "packageName must be a valid DNS-1123 subdomain"
CHANNEL = "channels entries must be a valid DNS-1123 subdomain"
DOMAIN = "ref must start with a registry domain"
REPOSITORY = "ref must name a repository"
BAD_TAG = "tag is invalid: it must start with a letter, digit or '_'"


def must_be(path: str, kind: str) -> str:
    return f"{path} in body must be of type {kind}"


@dataclass(frozen=True)
class Case:
    """One hostile object: `changes` to the valid base object, and what the API server answers."""

    id: str
    changes: tuple[tuple[str, Any], ...]
    expected: str | None
    """A substring of the rejection message; None when the object is admitted."""
    status: int = 422
    strict: bool = False
    """Send with `fieldValidation=Strict` (what kubectl does) instead of the server's default."""
    pruned: str | None = None
    """For an admitted object: a dotted path the API server must have dropped."""


def nested(depth: int) -> dict[str, Any]:
    """`{"a": {"a": ... {"a": 1}}}`, `depth` objects deep."""
    value: Any = 1
    for _ in range(depth):
        value = {"a": value}
    return dict(value)


EXTENSION_CASES = [
    Case("name-254-chars", (("metadata.name", "x" * 254),), NAME_LONG),
    Case("name-uppercase", (("metadata.name", "My-Extension"),), NAME),
    Case("name-underscore", (("metadata.name", "my_extension"),), NAME),
    Case("name-unicode", (("metadata.name", "extensión"),), NAME),
    Case("name-leading-dot", (("metadata.name", ".extension"),), NAME),
    Case("spec-missing", (("spec", DELETE),), "spec: Required value"),
    Case("spec-is-a-list", (("spec", []),), must_be("spec", "object")),
    Case("namespace-integer", (("spec.namespace", 42),), must_be("spec.namespace", "string")),
    Case("namespace-null", (("spec.namespace", None),), "spec.namespace: Required value"),
    Case("namespace-1mib", (("spec.namespace", "x" * MiB),), "spec.namespace: Too long"),
    Case("namespace-unicode", (("spec.namespace", "namespacé"),), NS_LABEL),
    Case("namespace-newline", (("spec.namespace", "argocd\n"),), NS_LABEL),
    Case("sa-name-empty", (("spec.serviceAccount.name", ""),), SA_NAME),
    Case("sa-name-254-chars", (("spec.serviceAccount.name", "x" * 254),), "serviceAccount.name: Too long"),
    Case(
        "sa-is-a-string",
        (("spec.serviceAccount", "argocd-installer"),),
        must_be("spec.serviceAccount", "object"),
    ),
    Case(
        "source-type-missing", (("spec.source.sourceType", DELETE),), "spec.source.sourceType: Required value"
    ),
    Case("package-empty", ((f"{CATALOG}.packageName", ""),), PACKAGE),
    Case("package-trailing-dot", ((f"{CATALOG}.packageName", "argocd-operator."),), PACKAGE),
    Case("package-slash", ((f"{CATALOG}.packageName", "../argocd-operator"),), PACKAGE),
    Case(
        "package-list",
        ((f"{CATALOG}.packageName", ["argocd-operator"]),),
        must_be(f"{CATALOG}.packageName", "string"),
    ),
    Case("channels-a-string", ((f"{CATALOG}.channels", "stable"),), must_be(f"{CATALOG}.channels", "array")),
    Case("channel-unicode", ((f"{CATALOG}.channels", ["stäble"]),), CHANNEL),
    Case("channel-duplicated", ((f"{CATALOG}.channels", ["stable", "stable"]),), None),
    Case("version-integer", ((f"{CATALOG}.version", 1),), must_be(f"{CATALOG}.version", "string")),
    Case("version-1mib", ((f"{CATALOG}.version", "1" * MiB),), f"{CATALOG}.version: Too long"),
    Case("version-alternative-empty", ((f"{CATALOG}.version", "1.0.0 ||"),), "invalid version expression"),
    Case(
        "version-shell-injection", ((f"{CATALOG}.version", "1.0.0; rm -rf /"),), "invalid version expression"
    ),
    Case("version-only-spaces", ((f"{CATALOG}.version", "   "),), "invalid version expression"),
    Case(
        "selector-a-list", ((f"{CATALOG}.selector", [{"a": "b"}]),), must_be(f"{CATALOG}.selector", "object")
    ),
    Case(
        "selector-label-value-integer",
        ((f"{CATALOG}.selector", {"matchLabels": {"tier": 1}}),),
        must_be(f"{CATALOG}.selector.matchLabels.tier", "string"),
    ),
    Case(
        "selector-expression-without-operator",
        ((f"{CATALOG}.selector", {"matchExpressions": [{"key": "tier"}]}),),
        f"{CATALOG}.selector.matchExpressions[0].operator: Required value",
    ),
    Case(
        "selector-key-318-chars",
        ((f"{CATALOG}.selector", {"matchExpressions": [{"key": "k" * 318, "operator": "Exists"}]}),),
        "key: Too long",
    ),
    Case("policy-empty", ((f"{CATALOG}.upgradeConstraintPolicy", ""),), UNSUPPORTED),
    Case(
        "deadline-string",
        (("spec.progressDeadlineMinutes", "10"),),
        must_be("spec.progressDeadlineMinutes", "integer"),
    ),
    Case(
        "deadline-fraction",
        (("spec.progressDeadlineMinutes", 10.5),),
        must_be("spec.progressDeadlineMinutes", "integer"),
    ),
    Case(
        "deadline-over-int64",
        (("spec.progressDeadlineMinutes", 1 << 64),),
        "should be less than or equal to 720",
    ),
    Case(
        "config-inline-a-string",
        (("spec.config", {"configType": "Inline", "inline": "x"}),),
        must_be("spec.config.inline", "object"),
    ),
    Case("config-inline-100-deep", (("spec.config", {"configType": "Inline", "inline": nested(100)}),), None),
    Case(
        "unknown-field-pruned", (("spec.installNamespace", "argocd"),), None, pruned="spec.installNamespace"
    ),
    Case(
        "unknown-field-strict",
        (("spec.installNamespace", "argocd"),),
        'unknown field "spec.installNamespace"',
        status=400,
        strict=True,
    ),
]

CATALOG_CASES = [
    Case("name-254-chars", (("metadata.name", "x" * 254),), NAME_LONG),
    Case("name-uppercase", (("metadata.name", "OperatorHub"),), NAME),
    Case("name-space", (("metadata.name", "operator hub"),), NAME),
    Case("spec-is-a-string", (("spec", "Image"),), must_be("spec", "object")),
    Case("source-missing", (("spec.source", DELETE),), "spec.source: Required value"),
    Case("source-type-missing", (("spec.source.type", DELETE),), "spec.source.type: Required value"),
    Case(
        "image-a-string", (("spec.source.image", "quay.io/c:latest"),), must_be("spec.source.image", "object")
    ),
    Case("ref-integer", ((REF, 1),), must_be(REF, "string")),
    Case("ref-empty", ((REF, ""),), DOMAIN),
    Case("ref-1mib", ((REF, "quay.io/" + "a" * MiB + ":latest"),), f"{REF}: Too long"),
    Case("ref-with-scheme", ((REF, "https://quay.io/catalog:latest"),), DOMAIN),
    Case("ref-unicode-domain", ((REF, "quäy.io/catalog:latest"),), DOMAIN),
    Case("ref-path-traversal", ((REF, "quay.io/../catalog:latest"),), REPOSITORY),
    Case("ref-trailing-space", ((REF, "quay.io/catalog:latest "),), BAD_TAG),
    Case("ref-newline", ((REF, "quay.io/catalog:latest\nevil.io/x:1"),), REPOSITORY),
    Case("ref-query-string", ((REF, "quay.io/catalog:latest?x=1"),), BAD_TAG),
    Case("ref-two-digests", ((REF, f"quay.io/catalog@{DIGEST}@{DIGEST}"),), "digest algorithm is invalid"),
    # Admitted, but digests are lowercase hex: catalogd reports it (Progressing Blocked).
    Case("ref-uppercase-digest", ((REF, "quay.io/catalog@sha256:" + "AB" * 32),), None),
    Case("ref-sha512-digest", ((REF, "quay.io/catalog@sha512:" + "ab" * 64),), None),
    # Admitted, but no registry client takes an md5 digest: catalogd reports it (Progressing Blocked).
    Case("ref-md5-digest", ((REF, "quay.io/catalog@md5:" + "ab" * 16),), None),
    Case("ref-port-out-of-range", ((REF, "localhost:99999/catalog:v1"),), None),
    Case("ref-1000-chars", ((REF, "quay.io/" + "a" * 985 + ":latest"),), None),
    Case("poll-string", ((POLL, "10"),), must_be(POLL, "integer")),
    Case("poll-negative", ((POLL, -1),), "should be greater than or equal to 1"),
    Case("poll-over-int32", ((POLL, 2147483648),), "should be less than or equal to 2147483647"),
    Case(
        "poll-with-tag-and-digest",
        ((REF, f"quay.io/catalog:v1@{DIGEST}"), (POLL, 5)),
        "pollIntervalMinutes must not be set when ref is a digest reference",
    ),
    Case("priority-string", (("spec.priority", "high"),), must_be("spec.priority", "integer")),
    Case("priority-fraction", (("spec.priority", 0.5),), must_be("spec.priority", "integer")),
    Case(
        "priority-under-int32",
        (("spec.priority", -2147483649),),
        "should be greater than or equal to -2147483648",
    ),
    Case("availability-empty", (("spec.availabilityMode", ""),), UNSUPPORTED),
    Case("availability-lowercase", (("spec.availabilityMode", "available"),), UNSUPPORTED),
    Case(
        "unknown-field-pruned",
        (("spec.source.image.insecure", True),),
        None,
        pruned="spec.source.image.insecure",
    ),
    Case(
        "unknown-field-strict",
        (("spec.source.image.insecure", True),),
        'unknown field "spec.source.image.insecure"',
        status=400,
        strict=True,
    ),
]


def _accepted(cases: list[Case]) -> list[str]:
    return [case.id for case in cases if case.expected is None]


EXTENSION_ACCEPTED = _accepted(EXTENSION_CASES)
CATALOG_ACCEPTED = _accepted(CATALOG_CASES)


def _has(obj: dict[str, Any], path: str) -> bool:
    node: Any = obj
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


async def _create(objects: Objects, body: dict[str, Any], case: Case) -> dict[str, Any]:
    plural = PLURALS[body["kind"]]
    if case.strict:
        created = await objects.api.create_cluster_custom_object(
            names.GROUP, names.VERSION, plural, body, field_validation="Strict"
        )
    else:
        created = await objects.api.create_cluster_custom_object(names.GROUP, names.VERSION, plural, body)
    objects.created.append((plural, created["metadata"]["name"]))
    return dict(created)


async def _send(objects: Objects, body: dict[str, Any], case: Case) -> None:
    if case.expected is not None:
        with pytest.raises(ApiException) as caught:
            await _create(objects, body, case)
        message = rejection(caught.value)
        assert caught.value.status == case.status, message
        assert case.expected in message, message
        # Nothing half-applied: no object of that name exists afterwards.
        with pytest.raises(ApiException) as missing:
            await objects.get(body["kind"], body["metadata"]["name"])
        assert missing.value.status == 404
        return
    created = await _create(objects, body, case)
    assert created["metadata"]["uid"]
    stored = await objects.get(body["kind"], created["metadata"]["name"])
    if case.pruned is not None:
        assert _has(body, case.pruned)
        assert not _has(stored, case.pruned), stored
    assert stored["spec"] == created["spec"]


def _params(cases: list[Case]) -> list[Any]:
    return [pytest.param(case, id=case.id) for case in cases]


@pytest.mark.parametrize("case", _params(EXTENSION_CASES))
async def test_cluster_extension(objects: Objects, request: pytest.FixtureRequest, case: Case) -> None:
    await _send(objects, with_(cluster_extension(unique_name(request)), *case.changes), case)


@pytest.mark.parametrize("case", _params(CATALOG_CASES))
async def test_cluster_catalog(objects: Objects, request: pytest.FixtureRequest, case: Case) -> None:
    await _send(objects, with_(cluster_catalog(unique_name(request)), *case.changes), case)
