"""Whether a v0 installation can move, and what it becomes (`olm.cli.migrate.assess`)."""

from __future__ import annotations

from typing import Any

import pytest

from olm.cli.migrate.assess import (
    MIGRATED_FROM_ANNOTATION,
    catalog_for,
    extension_for,
    refusals,
    spec_changes,
    taken_over,
)
from olm.cli.migrate.v0 import Installation


def _installation(
    namespace: str = "team",
    *,
    package: str = "etcd",
    targets: list[str] | None = None,
    csv_spec: dict[str, Any] | None = None,
    phase: str = "Succeeded",
    plans: list[dict[str, Any]] | None = None,
    config: dict[str, Any] | None = None,
    groups: int = 1,
) -> Installation:
    spec: dict[str, Any] = {"name": package, "channel": "alpha", "source": "cs", "sourceNamespace": "olm"}
    if config:
        spec["config"] = config
    return Installation(
        namespace=namespace,
        subscription={"metadata": {"name": package, "namespace": namespace}, "spec": spec},
        csv={
            "metadata": {"name": f"{package}.v1.0.0", "namespace": namespace, "uid": "u"},
            "spec": {"version": "1.0.0", **(csv_spec or {})},
            "status": {"phase": phase},
        },
        operator_groups=[{"metadata": {"name": "og"}, "spec": {"targetNamespaces": targets or []}}] * groups,
        install_plans=plans or [],
    )


def test_a_plain_installation_is_not_refused() -> None:
    installation = _installation()
    assert refusals(installation, [installation]) == []


@pytest.mark.parametrize(
    ("installation", "wording"),
    [
        (_installation(phase="Installing"), "is Installing, not Succeeded"),
        (_installation(targets=["a", "b"]), "targets 2 namespaces (a, b)"),
        (_installation(groups=2), "has 2 OperatorGroups"),
        (
            _installation(csv_spec={"customresourcedefinitions": {"required": [{"name": "x.example.com"}]}}),
            "requires APIs another operator provides (x.example.com)",
        ),
        (
            _installation(csv_spec={"apiservicedefinitions": {"owned": [{"name": "v1.x"}]}}),
            "provides APIServices",
        ),
        (
            _installation(
                csv_spec={
                    "webhookdefinitions": [{"type": "ConversionWebhook", "conversionCRDs": ["a.example.com"]}]
                }
            ),
            "CRDs a.example.com use a conversion webhook",
        ),
        (
            _installation(
                plans=[
                    {
                        "metadata": {"name": "install-1"},
                        "spec": {
                            "clusterServiceVersionNames": ["etcd.v1.0.0", "dep.v2.0.0"],
                            "approved": True,
                        },
                        "status": {"phase": "Complete"},
                    }
                ]
            ),
            "installed it together with dep.v2.0.0 (InstallPlan install-1)",
        ),
        (
            _installation(
                plans=[
                    {
                        "metadata": {"name": "install-2"},
                        "spec": {"clusterServiceVersionNames": ["etcd.v1.0.1"], "approved": True},
                        "status": {"phase": "Installing"},
                    }
                ]
            ),
            "InstallPlan install-2 is approved and Installing",
        ),
    ],
)
def test_refusals_name_the_reason(installation: Installation, wording: str) -> None:
    found = refusals(installation, [installation])
    assert len(found) == 1
    assert wording in found[0]


def test_an_unapproved_upgrade_waiting_in_v0_is_not_a_refusal() -> None:
    pending = {
        "metadata": {"name": "install-2"},
        "spec": {"clusterServiceVersionNames": ["etcd.v1.0.1"], "approved": False},
        "status": {"phase": "RequiresApproval"},
    }
    installation = _installation(plans=[pending])
    assert refusals(installation, [installation]) == []


def test_a_package_installed_in_two_namespaces_is_refused_in_both() -> None:
    a, b = _installation("a"), _installation("b")
    for installation in (a, b):
        (reason,) = refusals(installation, [a, b])
        assert "installed by v0 in several namespaces (a, b)" in reason


def test_a_resumed_migration_is_checked_against_what_it_was_written_for() -> None:
    extension = {"metadata": {"name": "etcd", "annotations": {MIGRATED_FROM_ANNOTATION: "team/etcd.v1.0.0"}}}
    base = _installation()
    resumed = Installation(base.namespace, None, base.csv, base.operator_groups, [], extension)
    assert refusals(resumed, [resumed]) == []
    changed = {"metadata": {"name": "etcd", "annotations": {MIGRATED_FROM_ANNOTATION: "team/etcd.v0.9.0"}}}
    moved_on = Installation(base.namespace, None, base.csv, base.operator_groups, [], changed)
    (reason,) = refusals(moved_on, [moved_on])
    assert "changed while it was being migrated" in reason
    assert "spec.source.catalog.version to 1.0.0" in reason


def test_the_extension_pins_the_installed_version_on_the_channel_for_the_groups_namespace() -> None:
    config = {"env": [{"name": "LOG", "value": "debug"}]}
    extension = extension_for(_installation(targets=["apps"], config=config), "etcd", "community")
    spec = extension["spec"]
    assert spec["namespace"] == "team"
    assert spec["serviceAccount"] == {"name": "etcd-installer"}
    assert spec["source"]["catalog"] == {
        "packageName": "etcd",
        "version": "1.0.0",
        "channels": ["alpha"],
        "selector": {"matchLabels": {"olm.operatorframework.io/metadata.name": "community"}},
    }
    assert spec["config"]["inline"] == {"watchNamespace": "apps", "deploymentConfig": config}
    assert extension["metadata"]["annotations"] == {MIGRATED_FROM_ANNOTATION: "team/etcd.v1.0.0"}
    all_namespaces = extension_for(_installation(), "etcd", "community")
    assert "config" not in all_namespaces["spec"]


def _catalog(name: str, image: str) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"source": {"image": {"ref": image}}}}


def test_catalog_for_prefers_the_mapping_then_the_image_then_a_new_catalog() -> None:
    source = {"spec": {"image": "registry.test/catalog:v1"}}
    existing = [
        _catalog("community", "registry.test/catalog:v1"),
        _catalog("other", "registry.test/other:v1"),
    ]
    assert catalog_for("olm/cs", source, existing, {"olm/cs": "other"}).name == "other"
    assert catalog_for("olm/cs", source, existing, {}).name == "community"
    new = catalog_for("olm/cs", source, existing[1:], {})
    assert (new.name, new.image, new.create) == ("cs", "registry.test/catalog:v1", True)


def test_catalog_for_refuses_what_it_cannot_map() -> None:
    address_only = {"spec": {"address": "10.0.0.1:50051"}}
    assert "serves from an address" in catalog_for("olm/cs", address_only, [], {}).refusal
    assert (
        "no ClusterCatalog missing" in catalog_for("olm/cs", address_only, [], {"olm/cs": "missing"}).refusal
    )
    taken = [_catalog("cs", "registry.test/else:v1")]
    assert (
        "exists with another image" in catalog_for("olm/cs", {"spec": {"image": "r/x:1"}}, taken, {}).refusal
    )


def test_spec_changes_names_each_changed_path() -> None:
    live = {
        "replicas": 1,
        "template": {"metadata": {"annotations": {"a": "1"}}, "spec": {"containers": [{"image": "x"}]}},
    }
    same = {
        "replicas": 1,
        "template": {"metadata": {"annotations": {"a": "1"}}, "spec": {"containers": [{"image": "x"}]}},
    }
    changed = {
        "replicas": 2,
        "template": {"metadata": {"annotations": {"a": "1"}}, "spec": {"containers": [{"image": "y"}]}},
    }
    assert spec_changes(live, same) == []
    assert spec_changes(live, changed) == ["spec.replicas", "spec.template.spec.containers[0].image"]


def test_an_object_is_taken_over_when_it_has_the_extensions_labels_or_a_revision_controls_it() -> None:
    def sa(labels: dict[str, str], controller_uid: str | None) -> dict[str, Any]:
        refs: list[dict[str, Any]] = [{"kind": "ClusterServiceVersion", "name": "etcd.v1.0.0", "uid": "csv"}]
        if controller_uid:
            refs.append(
                {"kind": "ClusterObjectSet", "name": "etcd-1", "uid": controller_uid, "controller": True}
            )
        return {"metadata": {"name": "etcd", "labels": labels, "ownerReferences": refs}}

    owner = {
        "olm.operatorframework.io/owner-kind": "ClusterExtension",
        "olm.operatorframework.io/owner-name": "etcd",
    }
    revisions = frozenset({"rev-1"})
    assert taken_over(sa(owner, "rev-1"), "etcd", revisions)
    # v0 rewrote the labels of an object the revision controls: still the extension's.
    assert taken_over(sa({"olm-owner": "x"}, "rev-1"), "etcd", revisions)
    assert not taken_over(sa({}, "someone-else"), "etcd", revisions)
    assert not taken_over(sa({}, None), "etcd", revisions)
    other = {**owner, "olm.operatorframework.io/owner-name": "etcd-team"}
    assert not taken_over(sa(other, None), "etcd", revisions)
