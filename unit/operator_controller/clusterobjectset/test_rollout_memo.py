"""What a rollout keeps between reconciles of a revision: the fingerprint that stands for a live
object when it was found already applied, and the kinds whose drift watches start early."""

from __future__ import annotations

import copy
from typing import Any

from olm.operator_controller.clusterobjectset import rollout
from olm.operator_controller.clusterobjectset.sources import ResolvedObject, ResolvedPhase
from olm_runtime.client import GroupVersionKind

CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com", "labels": {"a": "1"}},
    "spec": {"group": "example.com", "names": {"kind": "Widget", "plural": "widgets"}},
}


def live(desired: dict[str, Any], **metadata: Any) -> dict[str, Any]:
    obj = copy.deepcopy(desired)
    obj["metadata"].update({"uid": "u", "resourceVersion": "10", "generation": 1, **metadata})
    obj["status"] = {"conditions": [{"type": "Established", "status": "False"}]}
    return obj


def test_a_status_change_keeps_the_fingerprint_and_a_spec_or_metadata_change_does_not() -> None:
    before = live(CRD)
    after_status = live(CRD, resourceVersion="11")
    after_status["status"]["conditions"][0]["status"] = "True"
    assert rollout.fingerprint(CRD, after_status) == rollout.fingerprint(CRD, before)

    spec_changed = live(CRD, resourceVersion="12", generation=2)
    assert rollout.fingerprint(CRD, spec_changed) != rollout.fingerprint(CRD, before)
    relabelled = live(CRD, resourceVersion="12")
    relabelled["metadata"]["labels"] = {}
    assert rollout.fingerprint(CRD, relabelled) != rollout.fingerprint(CRD, before)
    disowned = live(CRD, resourceVersion="12", ownerReferences=[])
    assert rollout.fingerprint(CRD, disowned) != rollout.fingerprint(CRD, before)


def test_objects_without_a_generation_or_with_more_than_a_spec_go_by_resource_version() -> None:
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": "v"}}
    found = live(config)
    assert rollout.fingerprint(config, found) == ("u", "10")
    found["metadata"].pop("generation")
    assert rollout.fingerprint(CRD, found) == ("u", "10")


def phase(name: str, *manifests: dict[str, Any]) -> ResolvedPhase:
    return ResolvedPhase(name, tuple(ResolvedObject(m, "Prevent", "inline") for m in manifests))


def test_prefetch_leaves_out_the_first_phase_and_the_kinds_the_revision_defines() -> None:
    account = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "a", "namespace": "n"}}
    widget = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "n"}}
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "n"}}
    broken = {"kind": "Deployment", "metadata": {"name": "no-api-version"}}
    phases = [phase("identity", account), phase("crds", CRD), phase("deploy", deployment, widget, broken)]
    assert list(rollout._prefetched(phases, rollout.only_objects(phases))) == [
        (
            GroupVersionKind("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
            None,
            "widgets.example.com",
        ),
        (GroupVersionKind("apps", "v1", "Deployment"), "n", "d"),
    ]


def test_drift_watches_name_an_object_only_where_it_is_the_one_of_its_kind_and_namespace() -> None:
    def config_map(name: str, namespace: str) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace}}

    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "r"}}
    phases = [
        phase("first", config_map("a", "one"), role),
        phase("second", config_map("b", "one"), config_map("c", "two")),
    ]
    assert rollout.only_objects(phases) == {
        ("rbac.authorization.k8s.io/v1/ClusterRole", None): "r",
        ("v1/ConfigMap", "two"): "c",  # "one" holds two: its watch selects them by label
    }
