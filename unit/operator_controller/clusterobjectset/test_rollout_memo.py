"""What a rollout keeps between reconciles of a revision: the fingerprint that stands for a live
object when it was found already applied, its objects as parsed from compact drift informers, and
the kinds whose drift watches start early."""

from __future__ import annotations

import copy
from typing import Any, cast

from olm.operator_controller.clusterobjectset import rollout
from olm.operator_controller.clusterobjectset.sources import ResolvedObject, ResolvedPhase
from olm_runtime import cache
from olm_runtime.client import GroupVersionKind
from olm_runtime.client.gvk import GroupVersionResource, ResourceInfo

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


CRDS = ResourceInfo(
    gvk=GroupVersionKind("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
    gvr=GroupVersionResource("apiextensions.k8s.io", "v1", "customresourcedefinitions"),
    namespaced=False,
)


def test_a_compact_informers_object_is_parsed_once_per_version_while_the_revision_rolls_out() -> None:
    informer = cache.Informer(cast(Any, None), CRDS, compact=True)
    informer.store.upsert(live(CRD))
    kept: rollout.Parsed = {}

    def read(parsed: rollout.Parsed) -> Any:
        run = rollout.Rollout(
            cast(Any, None),
            cast(Any, None),
            field_manager="test",
            concurrency=1,
            identity="test",
            on_phase_done=lambda _phase: None,
            parsed=parsed,
        )
        return run._live(informer, CRDS.gvk, "widgets.example.com", None)

    first = read(kept)
    assert first == live(CRD)
    assert read(kept) is first  # a later reconcile: the same JSON, not parsed again
    assert read({}) is not first  # without the revision's memo, a fresh parse
    changed = live(CRD, resourceVersion="11")
    changed["status"]["conditions"][0]["status"] = "True"
    informer.store.upsert(changed)
    again = read(kept)
    assert again is not first
    assert again["status"]["conditions"][0]["status"] == "True"
    assert read(kept) is again
    assert informer.stored("absent") is None
