"""ownerReferences: make one object the controller of another, and read who controls an object.

The garbage collector deletes an object once every owner named in its `metadata.ownerReferences` is
gone; at most one of those owners is its controller (`controller: true`), the one expected to
reconcile it, and the one `Builder.owns` enqueues. `set_controller_reference` follows
controller-runtime's `SetControllerReference`:

- the reference carries the owner's `apiVersion`, `kind`, `name` and `uid`, with `controller` and
  `blockOwnerDeletion` set, so a foreground deletion of the owner waits for the object;
- a reference to the same owner (same API group, kind and name, whatever the version or uid) is
  replaced where it stands, any other reference is kept;
- it refuses (`OwnerReferenceError`) what the API server or the garbage collector would not honour:
  an object that already has a different controller (`AlreadyControlled`), a namespaced owner of a
  cluster-scoped object, and an owner in another namespace.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any

from olm_runtime.client.gvk import GroupVersionKind

__all__ = [
    "AlreadyControlled",
    "OwnerReferenceError",
    "controller_of",
    "owner_references",
    "refers_to_kind",
    "set_controller_reference",
]


class OwnerReferenceError(ValueError):
    """The owner cannot own the object as asked."""


class AlreadyControlled(OwnerReferenceError):
    """The object already has a controller, and it is not the owner given."""


def owner_references(obj: Mapping[str, Any]) -> Sequence[Mapping[str, Any]]:
    """The object's ownerReferences, empty when it has none."""
    refs: Sequence[Mapping[str, Any]] = (obj.get("metadata") or {}).get("ownerReferences") or ()
    return refs


def controller_of(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The object's controller reference (the one with `controller: true`), or None."""
    return next((ref for ref in owner_references(obj) if ref.get("controller")), None)


def _group(api_version: str) -> str:
    return api_version.rpartition("/")[0]


def refers_to_kind(ref: Mapping[str, Any], kind: GroupVersionKind) -> bool:
    """Whether `ref` names an object of `kind`'s group and kind, in any version of the group: a
    reference written against an older version still names the same owner."""
    return ref.get("kind") == kind.kind and _group(str(ref.get("apiVersion", ""))) == kind.group


def _same_owner(ref: Mapping[str, Any], other: Mapping[str, Any]) -> bool:
    return (
        ref.get("name") == other["name"]
        and ref.get("kind") == other["kind"]
        and _group(str(ref.get("apiVersion", ""))) == _group(other["apiVersion"])
    )


def _describe(obj: Mapping[str, Any]) -> str:
    metadata = obj.get("metadata") or {}
    namespace = metadata.get("namespace")
    name = f"{namespace}/{metadata.get('name')}" if namespace else str(metadata.get("name"))
    return f"{obj.get('kind', 'object')} {name}"


def set_controller_reference(owner: Mapping[str, Any], obj: MutableMapping[str, Any]) -> None:
    """Make `owner` the controller of `obj` by editing `obj`'s `metadata.ownerReferences` in place.

    `owner` is an object as read from the API server (it needs `apiVersion`, `kind` and a
    `metadata.name` and `uid`); `obj` is usually a desired object about to be applied.
    """
    owner_metadata = owner.get("metadata") or {}
    api_version, kind = owner.get("apiVersion"), owner.get("kind")
    name, uid = owner_metadata.get("name"), owner_metadata.get("uid")
    if not (api_version and kind and name and uid):
        raise OwnerReferenceError(
            f"{_describe(owner)} cannot own anything: an owner needs apiVersion, kind, name and uid "
            "(read it from the API server after it was created)"
        )
    metadata = obj.setdefault("metadata", {})
    owner_namespace = owner_metadata.get("namespace")
    if owner_namespace:
        namespace = metadata.get("namespace")
        if not namespace:
            raise OwnerReferenceError(
                f"{_describe(owner)} is namespaced and cannot own the cluster-scoped {_describe(obj)}"
            )
        if namespace != owner_namespace:
            raise OwnerReferenceError(
                f"{_describe(owner)} cannot own {_describe(obj)}: owner references cannot cross namespaces"
            )
    reference = {
        "apiVersion": api_version,
        "kind": kind,
        "name": name,
        "uid": uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }
    current = controller_of(obj)
    if current is not None and not _same_owner(current, reference):
        raise AlreadyControlled(
            f"{_describe(obj)} is already controlled by {current.get('kind')} {current.get('name')}"
        )
    refs = [dict(ref) for ref in owner_references(obj)]
    same = next((index for index, ref in enumerate(refs) if _same_owner(ref, reference)), None)
    if same is None:
        refs.append(reference)
    else:
        refs[same] = reference
    metadata["ownerReferences"] = refs
