"""Collision protection and hand-over decisions."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from olm.api import names, ownership
from olm.api.ownership import Action
from olm.operator_controller.clusterobjectset import watches

OWNER = {names.OWNER_KIND_LABEL: "ClusterExtension", names.OWNER_NAME_LABEL: "ext"}
ME = ownership.Revision("ext-2", "uid-2", 2, OWNER)
OLDER = ownership.Revision("ext-1", "uid-1", 1, OWNER)
NEWER = ownership.Revision("ext-3", "uid-3", 3, OWNER)
SIBLINGS = {r.uid: r for r in (OLDER, NEWER)}


def live(*refs: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "ownerReferences": list(refs)}}


def ref(uid: str, kind: str = "ClusterObjectSet", *, controller: bool = True) -> dict[str, Any]:
    return {"apiVersion": "x/v1", "kind": kind, "name": f"n-{uid}", "uid": uid, "controller": controller}


@pytest.mark.parametrize(
    ("existing", "strategy", "action"),
    [
        pytest.param(None, "Prevent", Action.APPLY, id="absent-is-created"),
        pytest.param(live(ref("uid-2")), "Prevent", Action.APPLY, id="ours"),
        pytest.param(live(ref("uid-1")), "Prevent", Action.ADOPT, id="older-sibling-hands-over"),
        pytest.param(live(ref("uid-3")), "None", Action.SKIP, id="newer-sibling-keeps-it"),
        pytest.param(live(), "Prevent", Action.COLLISION, id="prevent-unowned"),
        pytest.param(
            live(ref("o", "Thing", controller=False)), "IfNoController", Action.ADOPT, id="ifnc-unowned"
        ),
        pytest.param(
            live(ref("foreign", "Deployment")), "IfNoController", Action.COLLISION, id="ifnc-controlled"
        ),
        pytest.param(live(ref("foreign", "Deployment")), "None", Action.ADOPT, id="none-controlled"),
        pytest.param(live(ref("other-cos")), "IfNoController", Action.COLLISION, id="unrelated-revision"),
    ],
)
def test_judge(existing: dict[str, Any] | None, strategy: str, action: Action) -> None:
    assert ownership.judge(existing, ME, SIBLINGS, strategy).action is action


def labelled(revision: str, owner: str = "ext") -> dict[str, Any]:
    """An object with no controller, labelled as managed by `revision` of ClusterExtension `owner`."""
    obj = live()
    obj["metadata"]["labels"] = {
        names.OWNER_KIND_LABEL: "ClusterExtension",
        names.OWNER_NAME_LABEL: owner,
        names.REVISION_NAME_LABEL: revision,
    }
    return obj


@pytest.mark.parametrize(
    ("existing", "action"),
    [
        pytest.param(labelled("ext-1"), Action.ADOPT, id="released-by-the-older-sibling"),
        pytest.param(labelled("ext-3"), Action.COLLISION, id="labelled-by-a-newer-sibling"),
        pytest.param(labelled("ext-1", owner="other"), Action.COLLISION, id="another-owner"),
        pytest.param(labelled("ext-0"), Action.COLLISION, id="not-a-sibling"),
    ],
)
def test_an_object_a_crash_left_between_release_and_apply_is_taken_over(
    existing: dict[str, Any], action: Action
) -> None:
    verdict = ownership.judge(existing, ME, SIBLINGS, "Prevent")
    assert verdict.action is action
    assert verdict.release is None


def test_collision_messages_name_the_owner() -> None:
    verdict = ownership.judge(live(ref("foreign", "Deployment")), ME, SIBLINGS, "Prevent")
    assert verdict.message == "is controlled by Deployment n-foreign (collision protection Prevent)"


def test_hand_over_removes_the_sibling_and_demotes_a_foreign_controller() -> None:
    sibling = ownership.judge(live(ref("uid-1")), ME, SIBLINGS, "Prevent")
    assert sibling.remove
    foreign = ownership.judge(live(ref("f", "Deployment"), ref("p", controller=False)), ME, SIBLINGS, "None")
    assert not foreign.remove
    assert foreign.release is not None
    refs = [ref("f", "Deployment"), ref("p", controller=False)]
    assert ownership.references_without(refs, "f", demote=True)[0]["controller"] is False
    assert [r["uid"] for r in ownership.references_without(refs, "f")] == ["p"]


def test_desired_object_carries_controller_reference_and_labels() -> None:
    manifest: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c", "namespace": "n", "labels": {"a": "b"}, "resourceVersion": "7"},
        "status": {"x": 1},
    }
    desired = ownership.desired_object(manifest, ME)
    assert desired["metadata"]["ownerReferences"] == [
        {
            "apiVersion": "olm.operatorframework.io/v1",
            "kind": "ClusterObjectSet",
            "name": "ext-2",
            "uid": "uid-2",
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    assert desired["metadata"]["labels"] == {"a": "b", **OWNER, names.REVISION_NAME_LABEL: "ext-2"}
    assert "resourceVersion" not in desired["metadata"]
    assert "status" not in desired
    assert manifest["metadata"]["labels"] == {"a": "b"}  # the input is not modified


@pytest.mark.parametrize(
    ("metadata", "expected"),
    [
        pytest.param(
            {"ownerReferences": [{**ref("u"), "apiVersion": "olm.operatorframework.io/v1", "name": "rev"}]},
            ["rev"],
            id="controller-reference",
        ),
        pytest.param(
            {
                "ownerReferences": [
                    {**ref("u", controller=False), "apiVersion": "olm.operatorframework.io/v1"}
                ],
                "labels": {names.REVISION_NAME_LABEL: "by-label"},
            },
            ["by-label"],
            id="label-when-no-controller",
        ),
        pytest.param({"ownerReferences": [ref("u", "Deployment")]}, [], id="someone-else"),
    ],
)
def test_drift_events_map_to_the_owning_revision(metadata: dict[str, Any], expected: list[str]) -> None:
    assert [r.name for r in watches.owning_revisions({"metadata": metadata})] == expected


def _applied_state() -> tuple[dict[str, Any], dict[str, Any]]:
    manifest: dict[str, Any] = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d", "namespace": "n"},
        "spec": {"replicas": 1, "template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}},
    }
    desired = ownership.desired_object(manifest, ME)
    copied = copy.deepcopy(desired)
    server: dict[str, Any] = {
        **copied,
        "metadata": {**copied["metadata"], "uid": "obj", "resourceVersion": "9", "annotations": {"x": "y"}},
        "spec": {
            "replicas": 1.0,
            "progressDeadlineSeconds": 600,
            "template": {"spec": {"containers": [{"name": "c", "image": "i", "imagePullPolicy": "Always"}]}},
        },
        "status": {"replicas": 1},
    }
    return desired, server


def test_an_object_holding_every_desired_field_is_not_applied_again() -> None:
    desired, server = _applied_state()
    assert ownership.already_applied(desired, server, ME)


def test_a_cluster_scoped_object_rendered_with_a_namespace_is_not_applied_again() -> None:
    manifest = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "vhook", "namespace": "install-ns"},
        "webhooks": [
            {"name": "vhook", "clientConfig": {"service": {"name": "s", "namespace": "install-ns"}}}
        ],
    }
    desired = ownership.desired_object(manifest, ME)
    stored = copy.deepcopy(desired)
    del stored["metadata"]["namespace"]  # what the API server keeps of a cluster-scoped object
    stored["webhooks"][0]["clientConfig"]["caBundle"] = "Q0E="  # cainjector's
    assert ownership.already_applied(desired, stored, ME)
    assert desired["metadata"]["namespace"] == "install-ns"  # the comparison changed nothing
    # A namespaced object in another namespace is another object.
    assert not ownership.already_applied(
        desired, {**stored, "metadata": {**stored["metadata"], "namespace": "x"}}, ME
    )


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda o: o["spec"].update(replicas=3), id="field-changed"),
        pytest.param(
            lambda o: o["spec"]["template"]["spec"]["containers"].append({"name": "x"}), id="list-grew"
        ),
        pytest.param(lambda o: o["metadata"]["labels"].clear(), id="label-removed"),
        pytest.param(
            lambda o: o["metadata"].update(ownerReferences=[ref("uid-1")]), id="controlled-by-another"
        ),
        pytest.param(lambda o: o["spec"].update(replicas=True), id="bool-is-not-a-number"),
        pytest.param(lambda o: o["spec"].update(replicas="1"), id="string-is-not-a-number"),
    ],
)
def test_any_difference_in_desired_fields_or_control_means_apply(change: Any) -> None:
    desired, server = _applied_state()
    change(server)
    assert not ownership.already_applied(desired, server, ME)
    assert not ownership.already_applied(desired, None, ME)


def retained(package: str) -> dict[str, Any]:
    """A CRD a `Retain` removal of an installation of `package` kept: no owner, no OLM labels."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {
            "name": "widgets.example.com",
            "annotations": {names.RETAINED_PACKAGE_ANNOTATION: package},
        },
    }


PACKAGED = ownership.Revision("ext-1", "uid-1", 1, {**OWNER, names.PACKAGE_NAME_LABEL: "widgets"})


def test_a_kept_crd_is_adopted_by_the_same_package_only() -> None:
    assert ownership.judge(retained("widgets"), PACKAGED, {}, "Prevent").action is Action.ADOPT
    assert ownership.judge(retained("gadgets"), PACKAGED, {}, "Prevent").action is Action.COLLISION
    # A revision that names no package (hand-written) adopts nothing on that ground.
    assert ownership.judge(retained("widgets"), ME, {}, "Prevent").action is Action.COLLISION


def test_a_kept_crd_someone_else_took_over_is_not_adopted() -> None:
    crd = retained("widgets")
    crd["metadata"]["ownerReferences"] = [ref("foreign", "Deployment")]
    assert ownership.judge(crd, PACKAGED, {}, "Prevent").action is Action.COLLISION


def test_an_aggregated_cluster_roles_rules_are_left_to_the_control_plane() -> None:
    aggregated: dict[str, Any] = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "manager"},
        "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"aggregate-to-manager": "true"}}]},
        "rules": [],
    }
    desired = ownership.desired_object(aggregated, ME)
    assert "rules" not in desired
    assert desired["aggregationRule"] == aggregated["aggregationRule"]
    assert aggregated["rules"] == []  # the manifest itself is left as it is
    filled = {
        **desired,
        "metadata": {**desired["metadata"], "uid": "u", "resourceVersion": "3"},
        "rules": [{"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get"]}],
    }
    assert ownership.already_applied(desired, filled, ME)  # the aggregated rules are no drift

    plain = {**aggregated, "aggregationRule": None, "rules": [{"apiGroups": [""], "verbs": ["get"]}]}
    assert ownership.desired_object(plain, ME)["rules"] == plain["rules"]
