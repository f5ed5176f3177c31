"""ClusterExtension admission: every schema rule and CEL rule, against the real API server."""

from __future__ import annotations

from typing import Any

import pytest

from e2e.api.conftest import Objects, unique_name
from e2e.api.objects import DELETE, cluster_extension, with_
from olm_testkit.api.versions import INVALID, TOO_LONG, VALID

pytestmark = pytest.mark.e2e

NS_LABEL = "namespace must be a valid DNS-1123 label"
SA_NAME = "serviceAccount.name must be a valid DNS-1123 subdomain"
PACKAGE = "packageName must be a valid DNS-1123 subdomain"
CHANNEL = "channels entries must be a valid DNS-1123 subdomain"
UNSUPPORTED = "Unsupported value"
CATALOG = "spec.source.catalog"

CASES = [
    pytest.param((), None, id="minimal"),
    pytest.param((("spec.namespace", "x" * 63),), None, id="namespace-63-chars"),
    pytest.param((("spec.namespace", "123-namespace"),), None, id="namespace-leading-digits"),
    pytest.param((("spec.namespace", "x" * 64),), "spec.namespace: Too long", id="namespace-64-chars"),
    pytest.param((("spec.namespace", "dotted.name"),), NS_LABEL, id="namespace-dotted"),
    pytest.param((("spec.namespace", "Capitalized"),), NS_LABEL, id="namespace-uppercase"),
    pytest.param((("spec.namespace", "-start"),), NS_LABEL, id="namespace-leading-hyphen"),
    pytest.param((("spec.namespace", "end-"),), NS_LABEL, id="namespace-trailing-hyphen"),
    pytest.param((("spec.namespace", ""),), NS_LABEL, id="namespace-empty"),
    pytest.param((("spec.namespace", DELETE),), "spec.namespace: Required value", id="namespace-missing"),
    # Optional, as upstream v1.11 accepts it (operator-controller holds or uses its default installer).
    pytest.param((("spec.serviceAccount", DELETE),), None, id="sa-missing"),
    pytest.param((("spec.serviceAccount", {}),), None, id="sa-name-missing"),
    pytest.param(
        (("spec.serviceAccount.name", ""),), "spec.serviceAccount.name: Invalid value", id="sa-name-empty"
    ),
    pytest.param((("spec.serviceAccount.name", "some.serviceaccount"),), None, id="sa-name-dotted"),
    pytest.param((("spec.serviceAccount.name", "some_sa"),), SA_NAME, id="sa-name-underscore"),
    pytest.param((("spec.serviceAccount.name", "Installer"),), SA_NAME, id="sa-name-uppercase"),
    pytest.param((("spec.source.sourceType", "Image"),), UNSUPPORTED, id="source-type-unknown"),
    pytest.param(
        (("spec.source", {"sourceType": "Bundle", "bundle": {"ref": "quay.io/example/op-bundle:v1.0.0"}}),),
        None,
        id="bundle-tag",
    ),
    pytest.param(
        (
            (
                "spec.source",
                {
                    "sourceType": "Bundle",
                    "bundle": {"ref": "quay.io/example/op-bundle:latest", "pollIntervalMinutes": 10},
                },
            ),
        ),
        None,
        id="bundle-tag-polled",
    ),
    pytest.param(
        (
            (
                "spec.source",
                {
                    "sourceType": "Bundle",
                    "bundle": {
                        "ref": f"quay.io/example/op-bundle@sha256:{'a' * 64}",
                        "pollIntervalMinutes": 10,
                    },
                },
            ),
        ),
        "pollIntervalMinutes must not be set when ref is a digest reference",
        id="bundle-digest-polled",
    ),
    pytest.param(
        (("spec.source.sourceType", "Bundle"),),
        "bundle is required when sourceType is Bundle",
        id="bundle-missing",
    ),
    pytest.param(
        (("spec.source.bundle", {"ref": "quay.io/example/op-bundle:v1"}),),
        "bundle is required when sourceType is Bundle, and must not be set otherwise",
        id="bundle-beside-catalog",
    ),
    pytest.param(
        (("spec.source", {"sourceType": "Bundle", "bundle": {"ref": "not a reference"}}),),
        "spec.source.bundle.ref",
        id="bundle-bad-ref",
    ),
    pytest.param(
        (("spec.source.catalog", DELETE),),
        "catalog is required when sourceType is Catalog",
        id="catalog-missing",
    ),
    pytest.param(
        ((f"{CATALOG}.packageName", DELETE),), f"{CATALOG}.packageName: Required value", id="package-missing"
    ),
    pytest.param(((f"{CATALOG}.packageName", "some.package"),), None, id="package-dotted"),
    pytest.param(((f"{CATALOG}.packageName", "ABC-DEF"),), PACKAGE, id="package-uppercase"),
    pytest.param(((f"{CATALOG}.packageName", "some_package"),), PACKAGE, id="package-underscore"),
    pytest.param(((f"{CATALOG}.packageName", ".some.package"),), PACKAGE, id="package-leading-dot"),
    pytest.param(((f"{CATALOG}.packageName", "x" * 254),), "packageName: Too long", id="package-254-chars"),
    pytest.param(
        ((f"{CATALOG}.channels", ["1.1.x", "alpha", "stable-v1", "dev-preview", "community"]),),
        None,
        id="channels-documented",
    ),
    pytest.param(((f"{CATALOG}.channels", ["original_40"]),), CHANNEL, id="channel-underscore"),
    pytest.param(((f"{CATALOG}.channels", ["-some-channel"]),), CHANNEL, id="channel-leading-hyphen"),
    pytest.param(((f"{CATALOG}.channels", ["camelCase"]),), CHANNEL, id="channel-uppercase"),
    pytest.param(((f"{CATALOG}.channels", [""]),), CHANNEL, id="channel-empty"),
    pytest.param(((f"{CATALOG}.channels", ["x" * 254]),), "Too long", id="channel-254-chars"),
    pytest.param(((f"{CATALOG}.channels", [f"c{i}" for i in range(256)]),), None, id="channels-256"),
    pytest.param(
        ((f"{CATALOG}.channels", [f"c{i}" for i in range(257)]),),
        "must have at most 256 items",
        id="channels-257",
    ),
    pytest.param(
        ((f"{CATALOG}.selector", {"matchLabels": {"olm.operatorframework.io/metadata.name": "my-catalog"}}),),
        None,
        id="selector-match-labels",
    ),
    pytest.param(
        (
            (
                f"{CATALOG}.selector",
                {"matchExpressions": [{"key": "example.com/support", "operator": "In", "values": ["gold"]}]},
            ),
        ),
        None,
        id="selector-match-expressions",
    ),
    pytest.param(
        ((f"{CATALOG}.selector", {"matchExpressions": [{"key": "tier", "operator": "Near"}]}),),
        UNSUPPORTED,
        id="selector-unknown-operator",
    ),
    pytest.param(
        ((f"{CATALOG}.upgradeConstraintPolicy", "SelfCertified"),), None, id="policy-self-certified"
    ),
    pytest.param(
        ((f"{CATALOG}.upgradeConstraintPolicy", "Enforce"),), UNSUPPORTED, id="policy-v1alpha1-enforce"
    ),
    pytest.param(
        (("spec.install", {"preflight": {"crdUpgradeSafety": {"enforcement": "None"}}}),),
        None,
        id="crd-upgrade-safety-none",
    ),
    pytest.param(
        (("spec.install", {"preflight": {"crdUpgradeSafety": {"enforcement": "Disabled"}}}),),
        UNSUPPORTED,
        id="crd-upgrade-safety-disabled",
    ),
    pytest.param((("spec.install", {}),), "install must set preflight when present", id="install-empty"),
    pytest.param(
        (("spec.install", {"preflight": {}}),),
        "preflight must set crdUpgradeSafety when present",
        id="preflight-empty",
    ),
    pytest.param(
        (("spec.config", {"configType": "Inline", "inline": {"watchNamespace": "argocd"}}),),
        None,
        id="config-inline",
    ),
    pytest.param(
        (("spec.config", {"configType": "Inline"}),),
        "inline is required when configType is Inline",
        id="config-inline-missing",
    ),
    pytest.param(
        (("spec.config", {"configType": "Inline", "inline": {}}),),
        "should have at least 1 properties",
        id="config-inline-empty",
    ),
    pytest.param(
        (("spec.config", {"configType": "Helm", "inline": {"a": 1}}),), UNSUPPORTED, id="config-type-unknown"
    ),
    pytest.param(
        (
            (
                "spec.upgrade",
                {
                    "automatic": "Patch",
                    "approvedVersion": "1.2.3",
                    "permissionGrowth": "Allow",
                    "rollbackTo": "1.0.0",
                },
            ),
        ),
        None,
        id="upgrade-all-fields",
    ),
    pytest.param(
        (("spec.upgrade", {"automatic": "Sometimes"}),), UNSUPPORTED, id="upgrade-automatic-unknown"
    ),
    pytest.param(
        (("spec.upgrade", {"approvedVersion": "latest"}),),
        "approvedVersion must be a semantic version such as 1.2.3",
        id="upgrade-approved-not-semver",
    ),
    pytest.param(
        (("spec.upgrade", {"permissionGrowth": "Deny"}),), UNSUPPORTED, id="upgrade-permission-growth-unknown"
    ),
    pytest.param(
        (("spec.upgrade", {"rollbackTo": "previous"}),),
        "rollbackTo must be a semantic version such as 1.2.3",
        id="upgrade-rollback-not-semver",
    ),
    pytest.param((("spec.removal", {"policy": "Retain"}),), None, id="removal-retain"),
    pytest.param((("spec.removal", {"policy": "Cascade"}),), None, id="removal-cascade"),
    pytest.param((("spec.removal", {"policy": "Orphan"}),), UNSUPPORTED, id="removal-policy-unknown"),
    pytest.param((("spec.removal", {"policy": "cascade"}),), UNSUPPORTED, id="removal-policy-lowercase"),
    pytest.param((("spec.progressDeadlineMinutes", 10),), None, id="deadline-10"),
    pytest.param((("spec.progressDeadlineMinutes", 720),), None, id="deadline-720"),
    pytest.param(
        (("spec.progressDeadlineMinutes", 9),), "should be greater than or equal to 10", id="deadline-9"
    ),
    pytest.param(
        (("spec.progressDeadlineMinutes", 721),), "should be less than or equal to 720", id="deadline-721"
    ),
]


@pytest.mark.parametrize(("changes", "expected"), CASES)
async def test_admission(
    objects: Objects,
    request: pytest.FixtureRequest,
    changes: tuple[tuple[str, Any], ...],
    expected: str | None,
) -> None:
    await objects.check(with_(cluster_extension(unique_name(request)), *changes), expected)


VERSIONS = [
    *(pytest.param(v, None, id=f"ok[{v}]") for v in VALID),
    *(pytest.param(v, "invalid version expression", id=f"bad[{v}]") for v in INVALID),
    pytest.param(TOO_LONG, "spec.source.catalog.version: Too long", id="bad[65-chars]"),
]


@pytest.mark.parametrize(("version", "expected"), VERSIONS)
async def test_version(
    objects: Objects, request: pytest.FixtureRequest, version: str, expected: str | None
) -> None:
    body = with_(cluster_extension(unique_name(request)), (f"{CATALOG}.version", version))
    await objects.check(body, expected)


async def test_defaults_are_applied(objects: Objects, request: pytest.FixtureRequest) -> None:
    body = with_(
        cluster_extension(unique_name(request)), ("spec.install", {"preflight": {"crdUpgradeSafety": {}}})
    )
    created = await objects.create(body)
    assert created["spec"]["source"]["catalog"]["upgradeConstraintPolicy"] == "CatalogProvided"
    assert created["spec"]["install"]["preflight"]["crdUpgradeSafety"]["enforcement"] == "Strict"
    assert "removal" not in created["spec"]  # absent means Retain; nothing is written for it


async def test_an_empty_removal_defaults_to_retain(objects: Objects, request: pytest.FixtureRequest) -> None:
    created = await objects.create(with_(cluster_extension(unique_name(request)), ("spec.removal", {})))
    assert created["spec"]["removal"] == {"policy": "Retain"}
