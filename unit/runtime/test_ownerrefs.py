"""ownerReferences: controller-runtime's SetControllerReference rules, and reading them back."""

from __future__ import annotations

from typing import Any

import pytest

from olm_runtime import ownerrefs
from olm_runtime.client import GroupVersionKind, kinds

GREETING = GroupVersionKind("greeter.example.com", "v1", "Greeting")


def greeting(name: str = "hello", *, namespace: str | None = "ns", uid: str = "uid-1") -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "uid": uid}
    if namespace is not None:
        metadata["namespace"] = namespace
    return {"apiVersion": "greeter.example.com/v1", "kind": "Greeting", "metadata": metadata}


def config_map(namespace: str | None = "ns", refs: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": "hello-greeting"}
    if namespace is not None:
        metadata["namespace"] = namespace
    if refs is not None:
        metadata["ownerReferences"] = refs
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata}


def test_the_reference_names_the_owner_as_blocking_controller() -> None:
    obj = config_map()
    ownerrefs.set_controller_reference(greeting(), obj)
    assert obj["metadata"]["ownerReferences"] == [
        {
            "apiVersion": "greeter.example.com/v1",
            "kind": "Greeting",
            "name": "hello",
            "uid": "uid-1",
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    assert ownerrefs.controller_of(obj) == obj["metadata"]["ownerReferences"][0]


def test_an_object_without_metadata_gets_one() -> None:
    cluster_role: dict[str, Any] = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole"}
    ownerrefs.set_controller_reference(greeting(namespace=None), cluster_role)
    assert cluster_role["metadata"]["ownerReferences"][0]["name"] == "hello"


def test_a_reference_to_the_same_owner_is_replaced_where_it_stands_and_others_are_kept() -> None:
    other = {"apiVersion": "v1", "kind": "Secret", "name": "s", "uid": "uid-s"}
    stale = {"apiVersion": "greeter.example.com/v1beta1", "kind": "Greeting", "name": "hello", "uid": "old"}
    obj = config_map(refs=[stale, other])
    ownerrefs.set_controller_reference(greeting(uid="new"), obj)
    refs = obj["metadata"]["ownerReferences"]
    assert [(ref["kind"], ref["uid"]) for ref in refs] == [("Greeting", "new"), ("Secret", "uid-s")]
    assert refs[0]["apiVersion"] == "greeter.example.com/v1"
    assert refs[0]["controller"] is True


def test_setting_it_twice_changes_nothing() -> None:
    obj = config_map()
    ownerrefs.set_controller_reference(greeting(), obj)
    first = [dict(ref) for ref in obj["metadata"]["ownerReferences"]]
    ownerrefs.set_controller_reference(greeting(), obj)
    assert obj["metadata"]["ownerReferences"] == first


def test_another_controller_is_refused_and_the_object_left_alone() -> None:
    theirs = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": "d", "controller": True}
    obj = config_map(refs=[theirs])
    with pytest.raises(ownerrefs.AlreadyControlled, match="already controlled by Deployment web"):
        ownerrefs.set_controller_reference(greeting(), obj)
    assert obj["metadata"]["ownerReferences"] == [theirs]


def test_a_namespaced_owner_cannot_own_a_cluster_scoped_object() -> None:
    with pytest.raises(ownerrefs.OwnerReferenceError, match="cannot own the cluster-scoped"):
        ownerrefs.set_controller_reference(greeting(), config_map(namespace=None))


def test_an_owner_cannot_reach_into_another_namespace() -> None:
    with pytest.raises(ownerrefs.OwnerReferenceError, match="cannot cross namespaces"):
        ownerrefs.set_controller_reference(greeting(namespace="a"), config_map(namespace="b"))


def test_a_cluster_scoped_owner_may_own_a_namespaced_object() -> None:
    obj = config_map(namespace="b")
    ownerrefs.set_controller_reference(greeting(namespace=None), obj)
    assert ownerrefs.controller_of(obj) is not None


def test_an_owner_not_yet_created_cannot_own_anything() -> None:
    unsaved = greeting()
    del unsaved["metadata"]["uid"]
    with pytest.raises(ownerrefs.OwnerReferenceError, match="needs apiVersion, kind, name and uid"):
        ownerrefs.set_controller_reference(unsaved, config_map())


def test_reading_references() -> None:
    owner = {"apiVersion": "greeter.example.com/v1beta1", "kind": "Greeting", "name": "g", "uid": "u"}
    plain = config_map(refs=[owner])
    assert ownerrefs.owner_references(plain) == [owner]
    assert ownerrefs.controller_of(plain) is None  # an owner, but not the controller
    assert ownerrefs.owner_references(config_map()) == ()
    assert ownerrefs.refers_to_kind(owner, GREETING)  # any version of the group
    assert not ownerrefs.refers_to_kind(owner, kinds.CONFIG_MAP)
    assert not ownerrefs.refers_to_kind(owner, GroupVersionKind("other.example.com", "v1", "Greeting"))
