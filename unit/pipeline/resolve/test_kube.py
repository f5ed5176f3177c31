"""Cluster constraints (roadmap F19): the Kubernetes versions a bundle runs on, resolution that skips
the bundles the cluster cannot run, and what `plan.choose` reports about them."""

from __future__ import annotations

import base64
from typing import Any

import orjson
import pytest
import yaml

from olm import fbc, semver
from olm.api import conditions as api
from olm.api.extensionspec import CatalogSource
from olm.pipeline import catalogs, plan, resolve
from olm.pipeline.catalogs.gathering import CatalogContent, Gathered
from unit import realdata
from unit.pipeline.resolve.catalogs import chain, content
from unit.pipeline.specs import extension_spec

CLUSTER = semver.Version(1, 35, 4)


def minimum(version: str) -> dict[str, Any]:
    return {"type": "olm.csv.metadata", "value": {"minKubeVersion": version, "displayName": "X"}}


def kube_range(text: str) -> dict[str, Any]:
    return {"type": "olm.kubeVersion", "value": text}


# 1.0.0 runs anywhere; 1.1.0 needs 1.36; 1.2.0 needs a cluster below 1.35.
PACKAGE = content(
    channels={"stable": chain("x", ["1.0.0", "1.1.0", "1.2.0"])},
    properties={"x.v1.1.0": [minimum("1.36.0")], "x.v1.2.0": [kube_range(">=1.30.0 <1.35.0")]},
)


@pytest.mark.parametrize(
    ("git_version", "version"),
    [
        ("v1.35.4", "1.35.4"),
        ("v1.35.4+k3s1", "1.35.4"),
        ("v1.30.2-eks-1552ad0", "1.30.2"),
        ("1.29", "1.29.0"),
    ],
)
def test_the_cluster_version_is_major_minor_patch(git_version: str, version: str) -> None:
    assert resolve.cluster_version(git_version) == semver.parse_version(version)


def test_a_cluster_version_that_is_not_one_is_refused() -> None:
    with pytest.raises(semver.VersionError):
        resolve.cluster_version("unknown")


def bundle(name: str) -> Any:
    return next(b for b in PACKAGE.bundles if b.name == name)


def test_what_a_bundle_needs_in_the_words_of_the_condition() -> None:
    assert resolve.unsupported(bundle("x.v1.0.0"), CLUSTER) is None
    assert resolve.unsupported(bundle("x.v1.1.0"), CLUSTER) == (
        "x 1.1.0 needs Kubernetes >= 1.36.0; this cluster is 1.35.4"
    )
    assert resolve.unsupported(bundle("x.v1.1.0"), semver.Version(1, 36, 0)) is None
    assert resolve.unsupported(bundle("x.v1.2.0"), CLUSTER) == (
        'x 1.2.0 needs Kubernetes ">=1.30.0 <1.35.0"; this cluster is 1.35.4'
    )
    assert resolve.unsupported(bundle("x.v1.2.0"), semver.Version(1, 34, 9)) is None


def test_a_constraint_that_does_not_parse_is_unmet() -> None:
    broken = content(
        channels={"stable": chain("x", ["1.0.0", "1.1.0"])},
        properties={"x.v1.0.0": [minimum("one-dot-two")], "x.v1.1.0": [kube_range("soon")]},
    )
    first, second = sorted(broken.bundles, key=lambda b: b.name)
    assert (
        resolve.unsupported(first, CLUSTER)
        == "x 1.0.0 declares minKubeVersion 'one-dot-two', which is not a version"
    )
    assert (
        resolve.unsupported(second, CLUSTER)
        == "x 1.1.0 declares olm.kubeVersion 'soon', which is not a version range"
    )


def in_catalog(package: catalogs.PackageContent = PACKAGE) -> list[CatalogContent]:
    return [CatalogContent(name="c", priority=0, content=package)]


def test_resolution_skips_what_the_cluster_cannot_run() -> None:
    source = CatalogSource(package_name="x")
    assert resolve.resolve(source, None, in_catalog()).bundle.version == "1.2.0"  # cluster unknown
    assert resolve.resolve(source, None, in_catalog(), cluster=CLUSTER).bundle.version == "1.0.0"


def test_nothing_the_cluster_runs_is_a_failure_that_says_why() -> None:
    source = CatalogSource(package_name="x", version=">=1.1.0")
    with pytest.raises(resolve.NoBundlesFound) as failure:
        resolve.resolve(source, None, in_catalog(), cluster=CLUSTER)
    assert str(failure.value) == 'no bundles found for package "x" matching version ">=1.1.0"'
    assert failure.value.explanation == (
        'catalogs: c (x 1.2.0 needs Kubernetes ">=1.30.0 <1.35.0"; this cluster is 1.35.4); '
        f"{resolve.Advice.CLUSTER}"
    )


def test_the_plans_refusal_keeps_upstreams_message_and_carries_the_explanation_beside_it() -> None:
    spec = extension_spec(catalog=CatalogSource(package_name="x", version=">=1.1.0"))
    gathered = Gathered(contents=tuple(in_catalog()), skipped=(), not_selected=())
    with pytest.raises(plan.Unresolved) as refused:
        plan.choose(plan.Request(extension="e", spec=spec), gathered, cluster=CLUSTER)
    assert (refused.value.reason, refused.value.retry) == (api.REASON_RETRYING, True)
    assert refused.value.message == 'no bundles found for package "x" matching version ">=1.1.0"'
    assert refused.value.explained == (
        'no bundles found for package "x" matching version ">=1.1.0"; catalogs: c (x 1.2.0 needs Kubernetes '
        f'">=1.30.0 <1.35.0"; this cluster is 1.35.4); {resolve.Advice.CLUSTER}'
    )


def test_the_installed_bundle_is_never_dropped_for_the_cluster() -> None:
    source = CatalogSource(package_name="x", version="1.1.0")
    installed = resolve.Installed(name="x.v1.1.0", version="1.1.0")
    assert resolve.resolve(source, installed, in_catalog(), cluster=CLUSTER).bundle.name == "x.v1.1.0"


def choose(installed: resolve.Installed, version: str | None = None) -> plan.Choice:
    spec = extension_spec(catalog=CatalogSource(package_name="x", version=version))
    gathered = Gathered(contents=tuple(in_catalog()), skipped=(), not_selected=())
    return plan.choose(plan.Request(extension="e", spec=spec, installed=installed), gathered, cluster=CLUSTER)


def test_an_update_the_cluster_cannot_run_is_available_and_held() -> None:
    choice = choose(resolve.Installed(name="x.v1.0.0", version="1.0.0"), version="<1.2.0")
    assert choice.resolution is not None
    assert choice.resolution.bundle.name == "x.v1.0.0"
    assert choice.updates is not None
    assert choice.updates.available is not None
    assert choice.updates.available.bundle.name == "x.v1.1.0"
    assert choice.updates.held == plan.Held(
        bundle=choice.updates.available.bundle,
        reason=api.REASON_CLUSTER_VERSION,
        message="x 1.1.0 needs Kubernetes >= 1.36.0; this cluster is 1.35.4",
    )
    assert choice.updates.installed_unsupported is None


def test_an_installed_bundle_the_cluster_outgrew_is_reported_and_kept() -> None:
    choice = choose(resolve.Installed(name="x.v1.2.0", version="1.2.0"))
    assert choice.resolution is not None
    assert choice.resolution.bundle.name == "x.v1.2.0"
    assert choice.updates is not None
    assert choice.updates.installed_unsupported == (
        'installed bundle x 1.2.0 needs Kubernetes ">=1.30.0 <1.35.0"; this cluster is 1.35.4; '
        "it stays installed, nothing is removed"
    )


def slim(version: str, *properties: dict[str, Any]) -> fbc.Bundle:
    """Bundle `x` of `version` with `properties` after its `olm.package`, as the slim catalog client
    that operator-controller runs keeps it."""
    package = {"type": "olm.package", "value": {"packageName": "x", "version": version}}
    line = orjson.dumps(
        {
            "schema": "olm.bundle",
            "package": "x",
            "name": f"x.v{version}",
            "image": "i",
            "properties": [package, *properties],
        }
    )
    [kept] = catalogs.parse_lines("c", "x", [line], bundle_properties=resolve.BUNDLE_PROPERTIES).bundles
    return kept


def test_a_slim_catalog_client_keeps_only_min_kube_version_of_the_csv_metadata() -> None:
    kept = slim(
        "1.0.0",
        {"type": "olm.csv.metadata", "value": {"minKubeVersion": "1.36.0", "description": "long"}},
        {"type": "olm.kubeVersion", "value": "<2.0.0"},
        {"type": "olm.gvk", "value": {"group": "g", "kind": "K", "version": "v1"}},
    )
    assert [(p.type, p.value) for p in kept.properties] == [
        ("olm.package", {"packageName": "x", "version": "1.0.0"}),
        ("olm.csv.metadata", {"minKubeVersion": "1.36.0"}),
        ("olm.kubeVersion", "<2.0.0"),
    ]


def bundle_object(obj: dict[str, Any]) -> dict[str, Any]:
    return {"type": "olm.bundle.object", "value": {"data": base64.b64encode(orjson.dumps(obj)).decode()}}


CSV_OBJECT = {
    "apiVersion": "operators.coreos.com/v1alpha1",
    "kind": "ClusterServiceVersion",
    "spec": {"minKubeVersion": "1.36.0"},
}


def test_an_older_catalog_s_embedded_csv_counts_as_its_metadata() -> None:
    older = content(
        channels={"stable": chain("x", ["1.0.0", "1.1.0"])},
        properties={
            "x.v1.1.0": [
                bundle_object({"kind": "CustomResourceDefinition", "spec": {}}),
                bundle_object(CSV_OBJECT),
            ],
            "x.v1.0.0": [{"type": "olm.bundle.object", "value": {"data": "not base64!"}}],
        },
    )
    by_name = {b.name: b for b in older.bundles}
    assert resolve.unsupported(by_name["x.v1.1.0"], CLUSTER) == (
        "x 1.1.0 needs Kubernetes >= 1.36.0; this cluster is 1.35.4"
    )
    assert resolve.unsupported(by_name["x.v1.0.0"], CLUSTER) is None


def test_a_slim_catalog_client_keeps_the_embedded_csv_s_min_kube_version_only() -> None:
    kept = slim("1.1.0", bundle_object(CSV_OBJECT), bundle_object({"kind": "CustomResourceDefinition"}))
    assert [(p.type, p.value) for p in kept.properties] == [
        ("olm.package", {"packageName": "x", "version": "1.1.0"}),
        ("olm.csv.metadata", {"minKubeVersion": "1.36.0"}),
    ]
    assert resolve.unsupported(kept, CLUSTER) is not None


def test_the_real_bundle_object_catalog_reads_and_declares_no_minimum() -> None:
    path = (
        realdata.require()
        / "catalogs"
        / "compliance-operator-fbc"
        / "v4.16-bundle-object"
        / "compliance-operator"
        / "catalog.yaml"
    )
    documents = [d for d in yaml.safe_load_all(path.read_text()) if d and d.get("schema") == "olm.bundle"]
    lines = [orjson.dumps(d) for d in documents]
    parsed = catalogs.parse_lines(
        "c", "compliance-operator", lines, bundle_properties=resolve.BUNDLE_PROPERTIES
    )
    assert len(parsed.bundles) == len(documents) > 10
    assert all(resolve.unsupported(b, semver.Version(1, 20, 0)) is None for b in parsed.bundles)
    # Every bundle embeds its CSV, and the full reading finds it.
    full = catalogs.parse_lines("c", "compliance-operator", lines)
    assert all(b.embedded_csv() is not None for b in full.bundles)
