"""OLM v0's installations and marks, read as data (`olm.cli.migrate.v0`)."""

from __future__ import annotations

from typing import Any

import pytest

from olm.cli.migrate.v0 import Installation, install_mode, made_by, plan_of, released_metadata

CSV_UID = "csv-uid"


def _csv(**spec: Any) -> dict[str, Any]:
    return {
        "kind": "ClusterServiceVersion",
        "metadata": {"name": "etcd.v0.9.4", "namespace": "team", "uid": CSV_UID},
        "spec": {"version": "0.9.4", **spec},
        "status": {"phase": "Succeeded"},
    }


def _installation(csv: dict[str, Any] | None = None) -> Installation:
    subscription = {
        "metadata": {"name": "etcd", "namespace": "team", "uid": "sub-uid"},
        "spec": {"name": "etcd", "channel": "alpha"},
    }
    return Installation(
        namespace="team",
        subscription=subscription,
        csv=csv or _csv(),
        operator_groups=[{"metadata": {"name": "og"}, "spec": {"targetNamespaces": ["team"]}}],
        install_plans=[],
    )


@pytest.mark.parametrize(
    ("spec", "status", "mode", "watch"),
    [
        ({}, {}, "AllNamespaces", None),
        ({"targetNamespaces": ["team"]}, {}, "OwnNamespace", "team"),
        ({"targetNamespaces": ["apps"]}, {}, "SingleNamespace", "apps"),
        ({"targetNamespaces": ["a", "b"]}, {}, "MultiNamespace", None),
        ({"selector": {"matchLabels": {"x": "y"}}}, {"namespaces": ["apps"]}, "SingleNamespace", "apps"),
    ],
)
def test_install_mode_follows_the_operator_group(
    spec: dict[str, Any], status: dict[str, Any], mode: str, watch: str | None
) -> None:
    found = install_mode("team", {"spec": spec, "status": status})
    assert (found.mode, found.watch) == (mode, watch)


def test_made_by_accepts_each_of_v0s_marks_and_nothing_else() -> None:
    installation = _installation(
        _csv(customresourcedefinitions={"owned": [{"name": "etcdclusters.etcd.database.coreos.com"}]})
    )
    by_reference = {"metadata": {"ownerReferences": [{"kind": "ClusterServiceVersion", "uid": CSV_UID}]}}
    by_label = {"metadata": {"labels": {"olm.owner": "etcd.v0.9.4", "olm.owner.namespace": "team"}}}
    bundle_cluster_role = {"kind": "ClusterRole", "metadata": {"labels": {"olm.owner": "etcd.v0.9.4"}}}
    by_operator = {"metadata": {"labels": {"operators.coreos.com/etcd.team": ""}}}
    crd = {"kind": "CustomResourceDefinition", "metadata": {"name": "etcdclusters.etcd.database.coreos.com"}}
    other_namespace = {"metadata": {"labels": {"olm.owner": "etcd.v0.9.4", "olm.owner.namespace": "other"}}}
    other_csv = {"metadata": {"ownerReferences": [{"kind": "ClusterServiceVersion", "uid": "another"}]}}
    foreign_crd = {"kind": "CustomResourceDefinition", "metadata": {"name": "other.example.com"}}
    assert all(
        made_by(o, installation) for o in (by_reference, by_label, bundle_cluster_role, by_operator, crd)
    )
    assert not any(made_by(o, installation) for o in (other_namespace, other_csv, foreign_crd))


def test_released_metadata_takes_off_v0s_labels_and_csv_reference_only() -> None:
    live = {
        "metadata": {
            "labels": {
                "olm.owner": "etcd.v0.9.4",
                "olm.owner.kind": "ClusterServiceVersion",
                "olm.owner.namespace": "team",
                "olm.deployment-spec-hash": "abc",
                "operators.coreos.com/etcd.team": "",
                "app": "etcd",
            },
            "ownerReferences": [
                {"kind": "ClusterServiceVersion", "uid": CSV_UID, "name": "etcd.v0.9.4"},
                {"kind": "ClusterObjectSet", "uid": "cos", "name": "etcd-1", "controller": True},
            ],
        }
    }
    changes = released_metadata(live, _installation())
    assert changes["labels"] == {
        "olm.owner": None,
        "olm.owner.kind": None,
        "olm.owner.namespace": None,
        "olm.deployment-spec-hash": None,
        "operators.coreos.com/etcd.team": None,
    }
    assert changes["ownerReferences"] == [
        {"kind": "ClusterObjectSet", "uid": "cos", "name": "etcd-1", "controller": True}
    ]
    assert released_metadata({"metadata": {"labels": {"app": "etcd"}}}, _installation()) == {}


def test_released_metadata_drops_the_crds_installed_alongside_mark_of_this_installation_only() -> None:
    crd = {
        "metadata": {
            "annotations": {
                "operatorframework.io/installed-alongside-1a2b": "team/etcd.v0.9.4",
                "operatorframework.io/installed-alongside-3c4d": "other/etcd.v0.9.4",
                "keep": "me",
            }
        }
    }
    assert released_metadata(crd, _installation()) == {
        "annotations": {"operatorframework.io/installed-alongside-1a2b": None}
    }


def test_the_installations_plans_are_those_of_its_csv_or_of_its_subscription_alone() -> None:
    def plan(csvs: list[str], subscriptions: list[str]) -> dict[str, Any]:
        refs = [{"kind": "Subscription", "name": f"s-{uid}", "uid": uid} for uid in subscriptions]
        return {
            "metadata": {"name": "install-x", "ownerReferences": refs},
            "spec": {"clusterServiceVersionNames": csvs},
        }

    installation = _installation()
    assert plan_of(plan(["etcd.v0.9.4"], ["sub-uid"]), installation)
    # A plan for an upgrade the catalog operator wrote after the plan was read.
    assert plan_of(plan(["etcd.v0.9.5"], ["sub-uid"]), installation)
    assert not plan_of(plan(["etcd.v0.9.5"], ["sub-uid", "other"]), installation)
    assert not plan_of(plan(["redis.v1"], ["other"]), installation)
    resumed = Installation(
        namespace="team", subscription=None, csv=_csv(), operator_groups=[], install_plans=[]
    )
    assert plan_of(plan(["etcd.v0.9.4"], []), resumed)
    assert not plan_of(plan(["etcd.v0.9.5"], ["sub-uid"]), resumed)
