"""`ExtensionSpec` reads what the API models read: the same values from every ClusterExtension of
the spec's examples and the samples, the same defaults, and a named field for a wrong shape."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from olm.api.clusterextension import ClusterExtension
from olm.api.extensionspec import (
    AutomaticUpdates,
    BundleImage,
    CatalogSource,
    CRDUpgradeSafetyEnforcement,
    ExtensionSpec,
    OnFailure,
    PermissionGrowth,
    Readiness,
    RemovalPolicy,
    SpecError,
    UpgradeConstraintPolicy,
    UpgradeSpec,
    removal_policy,
)
from olm_testkit.api.specexamples import EXAMPLES
from unit.api import samples


def _from_model(obj: dict[str, Any]) -> ExtensionSpec:
    """What the pydantic model reads from `obj`, in `ExtensionSpec`'s terms."""
    spec = ClusterExtension.from_dict(obj).spec
    catalog = spec.source.catalog
    safety = spec.install.preflight.crd_upgrade_safety if spec.install and spec.install.preflight else None
    return ExtensionSpec(
        namespace=spec.namespace,
        service_account=spec.service_account.name if spec.service_account is not None else None,
        catalog=None
        if catalog is None
        else CatalogSource(
            package_name=catalog.package_name,
            version=catalog.version,
            channels=tuple(catalog.channels or ()),
            selector=catalog.selector.model_dump(by_alias=True, exclude_none=True)
            if catalog.selector is not None
            else None,
            upgrade_constraint_policy=catalog.upgrade_constraint_policy,
        ),
        config=spec.config.inline if spec.config is not None else None,
        crd_upgrade_safety=safety.enforcement if safety is not None else CRDUpgradeSafetyEnforcement.STRICT,
        progress_deadline_minutes=spec.progress_deadline_minutes,
        upgrade=UpgradeSpec()
        if spec.upgrade is None
        else UpgradeSpec(
            automatic=spec.upgrade.automatic,
            approved_version=spec.upgrade.approved_version,
            permission_growth=spec.upgrade.permission_growth,
            readiness=spec.upgrade.readiness,
            on_failure=spec.upgrade.on_failure,
            rollback_to=spec.upgrade.rollback_to,
        ),
        removal_policy=spec.removal.policy if spec.removal is not None else RemovalPolicy.RETAIN,
        bundle=None
        if spec.source.bundle is None
        else BundleImage(
            ref=spec.source.bundle.ref, poll_interval_minutes=spec.source.bundle.poll_interval_minutes
        ),
    )


def _extensions() -> list[pytest.ParameterSet]:
    found = [
        pytest.param(m, id=f"{e.source}:{e.section}:{m['metadata']['name']}")
        for e in EXAMPLES
        for m in e.manifests()
        if m["kind"] == "ClusterExtension"
    ]
    return [*found, pytest.param(samples.cluster_extension(), id="sample")]


@pytest.mark.parametrize("obj", _extensions())
def test_it_reads_what_the_model_reads(obj: dict[str, Any]) -> None:
    assert ExtensionSpec.of(obj) == _from_model(obj)


def _minimal() -> dict[str, Any]:
    return {
        "spec": {
            "namespace": "demo",
            "serviceAccount": {"name": "installer"},
            "source": {"sourceType": "Catalog", "catalog": {"packageName": "argocd-operator"}},
        }
    }


def test_unset_fields_take_the_api_defaults() -> None:
    spec = ExtensionSpec.of(_minimal())
    assert spec == _from_model(_minimal())
    assert spec.catalog == CatalogSource(package_name="argocd-operator")
    assert spec.catalog.upgrade_constraint_policy is UpgradeConstraintPolicy.CATALOG_PROVIDED
    assert spec.crd_upgrade_safety is CRDUpgradeSafetyEnforcement.STRICT
    assert spec.config is None
    assert spec.progress_deadline_minutes is None
    assert spec.upgrade == UpgradeSpec(automatic=AutomaticUpdates.ANY, approved_version=None)


@pytest.mark.parametrize("account", [None, {}])
def test_no_service_account_is_read_as_none_as_the_model_reads_it(account: dict[str, str] | None) -> None:
    obj = _minimal()
    if account is None:
        del obj["spec"]["serviceAccount"]
    else:
        obj["spec"]["serviceAccount"] = account
    spec = ExtensionSpec.of(obj)
    assert spec.service_account is None
    assert spec == _from_model(obj)


def test_the_upgrade_fields_are_read_as_the_model_reads_them() -> None:
    obj = _minimal()
    obj["spec"]["upgrade"] = {
        "automatic": "Patch",
        "approvedVersion": "0.8.0",
        "permissionGrowth": "Allow",
        "readiness": "Respect",
        "onFailure": "Rollback",
        "rollbackTo": "0.7.0",
    }
    spec = ExtensionSpec.of(obj)
    assert spec == _from_model(obj)
    assert spec.upgrade == UpgradeSpec(
        automatic=AutomaticUpdates.PATCH,
        approved_version="0.8.0",
        permission_growth=PermissionGrowth.ALLOW,
        readiness=Readiness.RESPECT,
        on_failure=OnFailure.ROLLBACK,
        rollback_to="0.7.0",
    )


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("spec", "serviceAccount"), "installer", "spec.serviceAccount: expected an object"),
        (("spec", "namespace"), "", "spec.namespace: expected a non-empty string"),
        (("spec", "source", "catalog", "channels"), "stable", "spec.source.catalog.channels: expected list"),
        (("spec", "source", "catalog", "channels"), [1], "spec.source.catalog.channels: expected strings"),
        (
            ("spec", "source", "catalog", "upgradeConstraintPolicy"),
            "Never",
            "spec.source.catalog.upgradeConstraintPolicy: unknown value 'Never'",
        ),
        (("spec", "progressDeadlineMinutes"), True, "spec.progressDeadlineMinutes: expected int"),
        (
            ("spec", "upgrade"),
            {"automatic": "Sometimes"},
            "spec.upgrade.automatic: unknown value 'Sometimes'",
        ),
        (("spec", "upgrade"), {"readiness": "Maybe"}, "spec.upgrade.readiness: unknown value 'Maybe'"),
        (("spec", "removal"), {"policy": "Orphan"}, "spec.removal.policy: unknown value 'Orphan'"),
        (("spec", "removal"), "Cascade", "spec.removal: expected an object"),
        (
            ("spec", "install"),
            {"preflight": {"crdUpgradeSafety": {"enforcement": "Loose"}}},
            "unknown value 'Loose'",
        ),
    ],
)
def test_a_wrong_shape_names_the_field(path: tuple[str, ...], value: Any, message: str) -> None:
    obj = copy.deepcopy(_minimal())
    *parents, last = path
    node = obj
    for key in parents:
        node = node[key]
    node[last] = value
    with pytest.raises(SpecError, match=message.replace(".", r"\.").replace("(", r"\(")):
        ExtensionSpec.of(obj)


def test_the_removal_policy_is_retain_unless_cascade_is_asked_for() -> None:
    assert ExtensionSpec.of(_minimal()).removal_policy is RemovalPolicy.RETAIN
    obj = _minimal()
    obj["spec"]["removal"] = {"policy": "Cascade"}
    assert ExtensionSpec.of(obj).removal_policy is RemovalPolicy.CASCADE
    assert ExtensionSpec.of(obj) == _from_model(obj)
    obj["spec"]["removal"] = {}
    assert ExtensionSpec.of(obj) == _from_model(obj)
    assert ExtensionSpec.of(obj).removal_policy is RemovalPolicy.RETAIN


def test_the_removal_policy_is_read_even_when_the_rest_of_the_spec_is_broken() -> None:
    assert removal_policy({"spec": {"removal": {"policy": "Cascade"}, "source": 3}}) is RemovalPolicy.CASCADE
    assert removal_policy({}) is RemovalPolicy.RETAIN


def test_a_bundle_image_source_is_read_as_the_model_reads_it() -> None:
    obj = _minimal()
    obj["spec"]["source"] = {
        "sourceType": "Bundle",
        "bundle": {"ref": "quay.io/example/op-bundle:v1", "pollIntervalMinutes": 5},
    }
    spec = ExtensionSpec.of(obj)
    assert spec == _from_model(obj)
    assert spec.catalog is None
    assert spec.bundle == BundleImage(ref="quay.io/example/op-bundle:v1", poll_interval_minutes=5)
