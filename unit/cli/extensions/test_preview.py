"""The pure pieces of `install`/`upgrade`/`list`: the ClusterExtension written, what blocks a
rollout, how a plan and an extension are shown."""

from __future__ import annotations

import argparse
import re
from typing import Any

import pytest

from olm.cli.commands import CommandFailed
from olm.cli.extensions import listing, preview
from olm.cli.extensions.parsers import label_selector
from olm.cli.extensions.plan import check_catalog_fields, extension_object
from olm.cli.extensions.preview import blockers
from olm.pipeline.catalogs import PackageContent
from olm.pipeline.plan import Plan, install_mode
from olm.pipeline.preflight.verdicts import Collisions, CRDSafety, Permissions
from olm.pipeline.resolve import Deprecation, ResolvedBundle

OBJECTS: list[dict[str, Any]] = [
    {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "green", "namespace": "ns"}},
    {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "a.b"},
    },
]


def _plan(
    mode: str = "AllNamespaces",
    watch: str | None = None,
    *,
    crd_safety: CRDSafety | None = None,
    collisions: Collisions | None = None,
) -> Plan:
    return Plan(
        bundle=ResolvedBundle(
            package="green", name="green.v1.0.0", version="1.0.0", image="r.example/g:v1", catalog="demo"
        ),
        deprecation=Deprecation(channels=(("old", "use alpha"),)),
        install_namespace="ns",
        watch_namespace=watch,
        install_mode=mode,
        objects=OBJECTS,
        image="r.example/g@sha256:00",
        package_content=PackageContent(name="green"),
        crd_safety=crd_safety,
        permissions=None,
        collisions=collisions,
    )


def test_the_extension_carries_only_the_fields_given() -> None:
    obj = extension_object(
        "green",
        "kube-green",
        namespace="ns",
        service_account="installer",
        version=None,
        channels=(),
        selector=None,
        config=None,
    )
    assert obj["spec"] == {
        "namespace": "ns",
        "serviceAccount": {"name": "installer"},
        "source": {"sourceType": "Catalog", "catalog": {"packageName": "kube-green"}},
    }
    full = extension_object(
        "green",
        "kube-green",
        namespace="ns",
        service_account="installer",
        version=">=1.0.0",
        channels=("alpha",),
        selector={"matchLabels": {"k": "v"}},
        config={"watchNamespace": "other"},
    )
    assert full["spec"]["source"]["catalog"] == {
        "packageName": "kube-green",
        "version": ">=1.0.0",
        "channels": ["alpha"],
        "selector": {"matchLabels": {"k": "v"}},
    }
    assert full["spec"]["config"] == {"configType": "Inline", "inline": {"watchNamespace": "other"}}


def test_catalog_selector_is_key_equals_value() -> None:
    assert label_selector("a=b=c") == ("a", "b=c")
    with pytest.raises(argparse.ArgumentTypeError):
        label_selector("novalue")


def test_an_invalid_version_range_fails_before_any_catalog_is_read() -> None:
    with pytest.raises(CommandFailed, match=re.escape('invalid version range ">=1.0 <<"')):
        check_catalog_fields({"packageName": "green", "version": ">=1.0 <<"})


def test_install_mode_follows_the_watched_namespace() -> None:
    assert install_mode(None, "ns") == "AllNamespaces"
    assert install_mode("", "ns") == "AllNamespaces"
    assert install_mode("ns", "ns") == "OwnNamespace"
    assert install_mode("other", "ns") == "SingleNamespace"


def test_nothing_blocks_a_clean_preview() -> None:
    clean = blockers(CRDSafety(new=("a.b",)), Permissions(namespace="ns", service_account="sa"), Collisions())
    assert clean == []


def test_each_failed_preflight_blocks_with_a_phrase() -> None:
    found = blockers(
        CRDSafety(existing=("a.b",), problems=("validating upgrade for CRD ...",)),
        Permissions(namespace="ns", service_account="sa", missing=("line one", "line two")),
        Collisions(conflicts=("CustomResourceDefinition a.b is controlled by ClusterObjectSet other-1",)),
    )
    assert found == [
        "CRD upgrade safety fails for 1 CRD(s)",
        "ServiceAccount ns/sa lacks 2 permission(s) (see `olmctl rbac`)",
        "1 object(s) are controlled by another owner: "
        "CustomResourceDefinition a.b is controlled by ClusterObjectSet other-1",
    ]
    missing = blockers(CRDSafety(), Permissions(namespace="ns", service_account="sa", exists=False), None)
    assert missing == ["ServiceAccount ns/sa does not exist (create it, or pass --create-service-account)"]


def test_the_preview_text_lists_objects_and_verdicts() -> None:
    text = preview.plan_text(
        _plan(crd_safety=CRDSafety(new=("a.b",)), collisions=Collisions()),
        permissions=Permissions(namespace="ns", service_account="sa"),
    )
    assert "Install mode: AllNamespaces (watches all namespaces)" in text
    assert "  channel old: use alpha" in text
    assert "Objects (2):" in text
    rows = [line.split() for line in text.splitlines()]
    assert ["ServiceAccount", "green", "ns"] in rows
    assert ["CustomResourceDefinition", "a.b"] in rows
    assert "CRD upgrade safety: safe (1 new CRD(s))" in text
    assert "Permissions:        ServiceAccount ns/sa may manage every object (preflight passed)" in text
    assert "Collisions:         none (no object is controlled by another owner)" in text


def test_missing_permissions_are_listed_one_per_line() -> None:
    text = preview.plan_text(
        _plan(
            "SingleNamespace",
            "other",
            crd_safety=CRDSafety(not_checked="cannot read CustomResourceDefinitions: forbidden"),
        ),
        permissions=Permissions(namespace="ns", service_account="sa", missing=('Namespace:"" X',)),
    )
    assert "SingleNamespace (watches namespace other)" in text
    assert "CRD upgrade safety: not checked: cannot read CustomResourceDefinitions: forbidden" in text
    assert 'MISSING: ServiceAccount ns/sa lacks these permissions:\n    Namespace:"" X' in text


def test_the_preview_data_holds_the_objects_in_full() -> None:
    data = preview.plan_data(_plan(crd_safety=CRDSafety()), permissions=None)
    assert data["objects"] == OBJECTS
    assert data["installMode"] == "AllNamespaces"
    assert data["bundle"]["image"] == "r.example/g@sha256:00"
    assert data["preflight"]["permissions"] is None


def test_an_extension_row_shows_version_channels_and_health() -> None:
    obj = {
        "metadata": {"name": "green"},
        "spec": {
            "namespace": "ns",
            "source": {"catalog": {"packageName": "kube-green", "channels": ["alpha"]}},
        },
        "status": {
            "install": {"bundle": {"name": "kube-green.v0.7.0", "version": "0.7.0"}},
            "conditions": [
                {"type": "Installed", "status": "True", "reason": "Succeeded", "message": "ok"},
                {"type": "Progressing", "status": "True", "reason": "Retrying", "message": "later"},
            ],
        },
    }
    row = listing.extension_row(obj)
    assert row["version"] == "0.7.0"
    assert listing.extension_rows_table([row]).splitlines() == [
        "NAME    PACKAGE      VERSION   CHANNELS   NAMESPACE   INSTALLED          PROGRESSING",
        "green   kube-green   0.7.0     alpha      ns          True (Succeeded)   True (Retrying)",
    ]


def test_collisions_name_each_object_and_its_controller() -> None:
    conflict = "CustomResourceDefinition a.b is controlled by ClusterObjectSet other-1 of ClusterExtension x"
    collisions = Collisions(conflicts=(conflict,))
    text = preview.plan_text(_plan(collisions=collisions), permissions=None)
    assert (f"Collisions: COLLISION: the rollout would wait on 1 object(s):\n    {conflict}") in text
    assert preview.plan_data(_plan(collisions=collisions), permissions=None)["preflight"]["collisions"] == {
        "ok": False,
        "conflicts": list(collisions.conflicts),
        "notChecked": None,
    }
