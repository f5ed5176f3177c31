"""The models read what the API server returns and write what it accepts, losing nothing."""

from __future__ import annotations

import copy
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pydantic
import pytest

from olm.api import models as api
from unit.api import samples

ROUND_TRIPS = [
    pytest.param(api.ClusterExtension, samples.cluster_extension, id="cluster-extension"),
    pytest.param(api.ClusterCatalog, samples.cluster_catalog, id="cluster-catalog"),
    pytest.param(api.ClusterObjectSet, samples.cluster_object_set, id="cluster-object-set"),
]


@pytest.mark.parametrize(("model", "sample"), ROUND_TRIPS)
def test_server_objects_round_trip_unchanged(
    model: type[api.Resource], sample: Callable[[], dict[str, Any]]
) -> None:
    original = sample()
    assert model.from_dict(copy.deepcopy(original)).to_dict() == original


@pytest.mark.parametrize(("model", "sample"), ROUND_TRIPS)
def test_managed_fields_are_kept_for_read_modify_write(
    model: type[api.Resource], sample: Callable[[], dict[str, Any]]
) -> None:
    obj = model.from_dict(sample())
    obj.metadata.labels = {"changed": "yes"}
    written = obj.to_dict()
    assert written["metadata"]["managedFields"] == sample()["metadata"]["managedFields"]
    assert written["metadata"]["labels"] == {"changed": "yes"}


def test_embedded_objects_are_kept_verbatim_including_nulls() -> None:
    cos = api.ClusterObjectSet.from_dict(samples.cluster_object_set())
    embedded = cos.spec.phases[1].objects[0].object if cos.spec.phases else None
    assert embedded == samples.cluster_object_set()["spec"]["phases"][1]["objects"][0]["object"]
    assert embedded is not None
    assert embedded["metadata"]["creationTimestamp"] is None


def test_inline_config_is_kept_verbatim() -> None:
    ext = api.ClusterExtension.from_dict(samples.cluster_extension())
    assert ext.spec.config is not None
    assert ext.spec.config.inline == {"watchNamespace": "argocd", "nested": {"x": None}}


def test_typed_access_uses_snake_case_and_enums() -> None:
    ext = api.ClusterExtension.from_dict(samples.cluster_extension())
    assert ext.spec.service_account is not None
    assert ext.spec.service_account.name == "argocd-installer"
    assert ext.spec.source.catalog is not None
    assert ext.spec.source.catalog.upgrade_constraint_policy is api.UpgradeConstraintPolicy.CATALOG_PROVIDED
    assert ext.status is not None
    assert ext.status.conditions is not None
    installed = ext.status.conditions[0]
    assert installed.status is api.ConditionStatus.TRUE
    assert installed.last_transition_time == datetime(2025, 1, 2, 3, 4, 6, tzinfo=UTC)
    assert ext.metadata.creation_timestamp == datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)


def test_objects_built_in_python_serialise_to_the_wire_shape() -> None:
    ext = api.ClusterExtension(
        metadata=api.ObjectMeta(name="argocd"),
        spec=api.ClusterExtensionSpec(
            namespace="argocd",
            service_account=api.ServiceAccountReference(name="installer"),
            source=api.SourceConfig(
                source_type=api.ExtensionSourceType.CATALOG,
                catalog=api.CatalogFilter(package_name="argocd-operator", channels=["stable"]),
            ),
        ),
    )
    assert ext.to_dict() == {
        "apiVersion": "olm.operatorframework.io/v1",
        "kind": "ClusterExtension",
        "metadata": {"name": "argocd"},
        "spec": {
            "namespace": "argocd",
            "serviceAccount": {"name": "installer"},
            "source": {
                "sourceType": "Catalog",
                "catalog": {
                    "packageName": "argocd-operator",
                    "channels": ["stable"],
                    "upgradeConstraintPolicy": "CatalogProvided",
                },
            },
        },
    }


def test_camel_case_and_snake_case_are_both_accepted_on_input() -> None:
    by_alias = api.ObjectSourceRef.model_validate({"name": "s", "key": "k"})
    by_name = api.ObjectSourceRef(name="s", key="k")
    assert by_alias == by_name
    phase = api.ClusterObjectSetPhase.model_validate(
        {"name": "p", "collision_protection": "None", "objects": [{"ref": {"name": "s", "key": "k"}}]}
    )
    assert phase.collision_protection is api.CollisionProtection.NONE


DEFAULTS = [
    pytest.param(
        lambda: api.CatalogFilter(package_name="p").upgrade_constraint_policy,
        api.UpgradeConstraintPolicy.CATALOG_PROVIDED,
        id="upgrade-constraint-policy-catalog-provided",
    ),
    pytest.param(
        lambda: api.CRDUpgradeSafetyPreflightConfig().enforcement,
        api.CRDUpgradeSafetyEnforcement.STRICT,
        id="crd-upgrade-safety-strict",
    ),
    pytest.param(
        lambda: api.ClusterCatalogSpec.model_validate({"source": {"type": "Image"}}).priority,
        0,
        id="catalog-priority-zero",
    ),
    pytest.param(
        lambda: api.ClusterCatalogSpec.model_validate({"source": {"type": "Image"}}).availability_mode,
        api.AvailabilityMode.AVAILABLE,
        id="catalog-availability-available",
    ),
    pytest.param(lambda: api.ClusterCatalog.model_fields["kind"].default, "ClusterCatalog", id="kind"),
    pytest.param(
        lambda: api.ClusterObjectSet.model_fields["api_version"].default,
        "olm.operatorframework.io/v1",
        id="api-version",
    ),
]


@pytest.mark.parametrize(("actual", "expected"), DEFAULTS)
def test_defaults(actual: Callable[[], object], expected: object) -> None:
    assert actual() == expected


def test_unset_optional_fields_are_left_out() -> None:
    cos = api.ClusterObjectSet(
        metadata=api.ObjectMeta(name="r-1"),
        spec=api.ClusterObjectSetSpec(
            revision=1,
            lifecycle_state=api.LifecycleState.ACTIVE,
            collision_protection=api.CollisionProtection.PREVENT,
        ),
    )
    assert cos.to_dict()["spec"] == {
        "revision": 1,
        "lifecycleState": "Active",
        "collisionProtection": "Prevent",
    }
    assert "status" not in cos.to_dict()


REJECTED = [
    pytest.param(api.ClusterCatalog, {"kind": "ClusterExtension", "spec": {}}, id="wrong-kind"),
    pytest.param(api.ClusterObjectSetSpec, {"revision": 0}, id="revision-below-one"),
    pytest.param(
        api.ClusterObjectSetSpec,
        {"revision": 1, "lifecycleState": "Deleted", "collisionProtection": "Prevent"},
        id="unknown-lifecycle-state",
    ),
    pytest.param(api.ClusterExtensionSpec, {"namespace": "x" * 64}, id="namespace-too-long"),
    pytest.param(
        api.Condition,
        {
            "type": "Ready",
            "status": "Maybe",
            "reason": "R",
            "message": "",
            "lastTransitionTime": "2025-01-01T00:00:00Z",
        },
        id="condition-status-not-true-false-unknown",
    ),
    pytest.param(
        api.Condition,
        {
            "type": "Ready",
            "status": "True",
            "reason": "has space",
            "message": "",
            "lastTransitionTime": "2025-01-01T00:00:00Z",
        },
        id="condition-reason-pattern",
    ),
]


@pytest.mark.parametrize(("model", "data"), REJECTED)
def test_pydantic_rejects_values_outside_the_simple_bounds(
    model: type[pydantic.BaseModel], data: dict[str, Any]
) -> None:
    with pytest.raises(pydantic.ValidationError):
        model.model_validate(data)
