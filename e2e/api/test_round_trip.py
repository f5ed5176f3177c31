"""Objects built with the models are accepted, and what the server returns reads back unchanged."""

from __future__ import annotations

import pytest

from e2e.api.conftest import Objects, unique_name
from olm.api import models as api

pytestmark = pytest.mark.e2e


def _extension(name: str) -> api.ClusterExtension:
    return api.ClusterExtension(
        metadata=api.ObjectMeta(name=name, labels={"team": "platform"}),
        spec=api.ClusterExtensionSpec(
            namespace="argocd",
            service_account=api.ServiceAccountReference(name="argocd-installer"),
            source=api.SourceConfig(
                source_type=api.ExtensionSourceType.CATALOG,
                catalog=api.CatalogFilter(
                    package_name="argocd-operator",
                    version=">=0.6.0, <1.0.0",
                    channels=["alpha"],
                    selector=api.LabelSelector(
                        match_labels={"olm.operatorframework.io/metadata.name": "hub"}
                    ),
                ),
            ),
            install=api.ClusterExtensionInstallConfig(
                preflight=api.PreflightConfig(crd_upgrade_safety=api.CRDUpgradeSafetyPreflightConfig())
            ),
            config=api.ClusterExtensionConfig(
                config_type=api.ClusterExtensionConfigType.INLINE, inline={"watchNamespace": "argocd"}
            ),
            progress_deadline_minutes=30,
        ),
    )


def _catalog(name: str) -> api.ClusterCatalog:
    return api.ClusterCatalog(
        metadata=api.ObjectMeta(name=name),
        spec=api.ClusterCatalogSpec(
            source=api.CatalogSource(
                type=api.CatalogSourceType.IMAGE,
                image=api.ImageSource(ref="localhost:5000/catalogs/e2e:v1", poll_interval_minutes=5),
            ),
            priority=-5,
        ),
    )


def _object_set(name: str) -> api.ClusterObjectSet:
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "controller", "namespace": "my-app"},
        "spec": {"replicas": 1},
    }
    return api.ClusterObjectSet(
        metadata=api.ObjectMeta(name=name),
        spec=api.ClusterObjectSetSpec(
            revision=3,
            lifecycle_state=api.LifecycleState.ACTIVE,
            collision_protection=api.CollisionProtection.IF_NO_CONTROLLER,
            phases=[
                api.ClusterObjectSetPhase(
                    name="deploy",
                    objects=[
                        api.ClusterObjectSetObject(object=deployment),
                        api.ClusterObjectSetObject(ref=api.ObjectSourceRef(name="s", key="k")),
                    ],
                )
            ],
            progression_probes=[
                api.ProgressionProbe(
                    selector=api.ObjectSelector(
                        type=api.SelectorType.GROUP_KIND,
                        group_kind=api.GroupKind(group="apps", kind="Deployment"),
                    ),
                    assertions=[
                        api.Assertion(
                            type=api.AssertionType.FIELDS_EQUAL,
                            fields_equal=api.FieldsEqualProbe(
                                field_a="spec.replicas", field_b="status.readyReplicas"
                            ),
                        )
                    ],
                )
            ],
        ),
    )


@pytest.mark.parametrize("build", [_extension, _catalog, _object_set], ids=["ce", "cc", "cos"])
async def test_model_built_objects_round_trip_through_the_server(
    objects: Objects, request: pytest.FixtureRequest, build: object
) -> None:
    assert callable(build)
    model: api.Resource = build(unique_name(request))
    stored = await objects.create(model.to_dict())
    assert stored["metadata"]["managedFields"]
    parsed = type(model).from_dict(stored)
    assert parsed.spec == model.spec  # type: ignore[attr-defined]
    assert parsed.to_dict() == stored
