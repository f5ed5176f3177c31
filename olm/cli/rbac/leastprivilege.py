"""The least RBAC an installer ServiceAccount needs to install, upgrade and remove one bundle.

`installer_rbac(objects, extension_name=..., namespace=..., service_account=...)` takes the objects a
bundle renders to (one version, or several versions concatenated to cover an upgrade between them)
and returns a ClusterRole, one Role per namespace the objects live in, and a binding for each, all
named `<extension>-installer`. Together they grant exactly what operator-controller does with the
ServiceAccount's token, and what its permission preflight checks before it does it:

- `get`, `update`, `patch` and `delete` on each object by name (server-side apply patches, the
  teardown of a removed or replaced revision deletes), and `create` on each object's resource, which
  Kubernetes cannot limit by name. No `list` or `watch`: operator-controller then finds drift of
  these objects by reading them by name every `drift_poll_interval`, rather than through a watch
  (listing a kind cannot be limited to the bundle's objects). The object requirements are the
  preflight's own (`permissions.requirements`), so the two cannot disagree.
- The rules of each Role and ClusterRole of the bundle, copied as they are: Kubernetes lets a user
  write a role only when it holds every rule the role grants. Holding the rules, rather than
  `escalate` on the roles, keeps the ServiceAccount from granting more than the bundle asks for. A
  ClusterRole with an `aggregationRule` gets its rules later from other roles, so for it alone the
  ServiceAccount gets `escalate` and `bind` on that role's name, as the preflight then asks.
- `bind` by name on roles the bundle's bindings reference without shipping them (preflight rule).
- `update` on `clusterextensions/finalizers` of the named extension and on
  `clusterobjectsets/finalizers`: where the `OwnerReferencesPermissionEnforcement` admission plugin
  runs, setting an owner reference with `blockOwnerDeletion` requires it. Every applied object is
  owned by its revision (`<extension>-<n>`, a name not known in advance, hence no `resourceNames`);
  the extension's own entry is the one upstream documents for its applier.

Namespaced permissions go into a Role in their namespace (the install namespace, and the watched
namespace of a SingleNamespace install); cluster-scoped ones into the ClusterRole. Kinds are
resolved to resources without a cluster: from the bundle's own CRDs, else by Kubernetes' plural rule
(`Issuer` -> `issuers`, `NetworkPolicy` -> `networkpolicies`), with the scope of well-known
cluster-scoped kinds from a table and that of other kinds from whether the objects carry a namespace.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from olm.api import names
from olm.pipeline.preflight import permissions

__all__ = ["installer_rbac", "role_name"]

_RBAC = "rbac.authorization.k8s.io"
_RBAC_V1 = f"{_RBAC}/v1"
_ROLE_KINDS = ("Role", "ClusterRole")
_RULE_KEYS = ("apiGroups", "resources", "resourceNames", "nonResourceURLs", "verbs")

# Cluster-scoped kinds a bundle may ship (besides its CRDs' own kinds), by (group, kind). The
# renderer keeps the install namespace on some of them (webhook configurations), so an object's
# namespace alone cannot tell.
_CLUSTER_SCOPED = frozenset(
    {
        ("", "Namespace"),
        ("", "PersistentVolume"),
        ("apiextensions.k8s.io", "CustomResourceDefinition"),
        ("apiregistration.k8s.io", "APIService"),
        ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"),
        ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"),
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"),
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"),
        (_RBAC, "ClusterRole"),
        (_RBAC, "ClusterRoleBinding"),
        ("scheduling.k8s.io", "PriorityClass"),
        ("storage.k8s.io", "StorageClass"),
        ("storage.k8s.io", "CSIDriver"),
        ("networking.k8s.io", "IngressClass"),
        ("node.k8s.io", "RuntimeClass"),
        ("cert-manager.io", "ClusterIssuer"),
        ("console.openshift.io", "ConsoleCLIDownload"),
        ("console.openshift.io", "ConsoleLink"),
        ("console.openshift.io", "ConsolePlugin"),
        ("console.openshift.io", "ConsoleQuickStart"),
        ("console.openshift.io", "ConsoleYAMLSample"),
    }
)


def role_name(extension_name: str) -> str:
    """The name of the ClusterRole, Roles and bindings made for `extension_name`'s installer."""
    return f"{extension_name}-installer"


def _group(api_version: str) -> str:
    return api_version.rpartition("/")[0]


def _plural(kind: str) -> str:
    """Kubernetes' guess of a kind's resource name (what its RESTMapper falls back to)."""
    lower = kind.lower()
    if lower.endswith("s"):
        return lower + "es"
    if lower.endswith("y"):
        return lower[:-1] + "ies"
    return lower + "s"


def _resources(objects: Sequence[Mapping[str, Any]]) -> permissions.Resources:
    """A cluster-free `resources(apiVersion, kind)` for the preflight's requirements. It answers None
    for the kinds of the bundle's own CRDs, which the preflight then resolves from those CRDs."""
    defined = {
        (f"{spec.get('group')}/{version.get('name')}", str((spec.get("names") or {}).get("kind")))
        for o in objects
        if o.get("kind") == "CustomResourceDefinition"
        for spec in [o.get("spec") or {}]
        for version in spec.get("versions") or ()
    }
    namespaced = {
        (_group(str(o.get("apiVersion") or "")), str(o.get("kind") or ""))
        for o in objects
        if (o.get("metadata") or {}).get("namespace")
    }

    def resources(api_version: str, kind: str) -> tuple[str, bool] | None:
        if (api_version, kind) in defined:
            return None
        key = (_group(api_version), kind)
        return _plural(kind), key not in _CLUSTER_SCOPED and key in namespaced

    return resources


def _is_role(obj: Mapping[str, Any]) -> bool:
    return _group(str(obj.get("apiVersion") or "")) == _RBAC and obj.get("kind") in _ROLE_KINDS


def _is_aggregated(obj: Mapping[str, Any]) -> bool:
    return obj.get("kind") == "ClusterRole" and bool(obj.get("aggregationRule"))


def _without_rules(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """A role of the bundle as an object to write, its grants left out: those are held verbatim
    (or escalated) below, not expanded one permission at a time."""
    if not _is_role(obj):
        return obj
    return {k: v for k, v in obj.items() if k not in ("rules", "aggregationRule")}


def _rule(
    group: str, resources: Iterable[str], verbs: Iterable[str], names_: Iterable[str] = ()
) -> dict[str, Any]:
    rule: dict[str, Any] = {"apiGroups": [group], "resources": sorted(resources)}
    if named := sorted(names_):
        rule["resourceNames"] = named
    rule["verbs"] = sorted(verbs)
    return rule


def _compact(requirements: Iterable[permissions.Requirement]) -> list[dict[str, Any]]:
    """Rules granting exactly `requirements` (all of one namespace): one rule per resource for the
    named verbs (names sharing the same verbs together), one per group for the unnamed ones."""
    named: dict[tuple[str, str], dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    unnamed: dict[tuple[str, str], set[str]] = defaultdict(set)
    for r in requirements:
        if r.resource_name:
            named[(r.api_group, r.resource)][r.resource_name].add(r.verb)
        else:
            unnamed[(r.api_group, r.resource)].add(r.verb)
    rules: list[dict[str, Any]] = []
    for (group, resource), by_name in sorted(named.items()):
        names_by_verbs: dict[tuple[str, ...], list[str]] = defaultdict(list)
        for name, verbs in by_name.items():
            names_by_verbs[tuple(sorted(verbs))].append(name)
        for verbs_key, grouped in sorted(names_by_verbs.items()):
            rules.append(_rule(group, [resource], verbs_key, grouped))
    resources_by_verbs: dict[tuple[str, tuple[str, ...]], list[str]] = defaultdict(list)
    for (group, resource), verbs in unnamed.items():
        resources_by_verbs[(group, tuple(sorted(verbs)))].append(resource)
    for (group, verbs_key), resources in sorted(resources_by_verbs.items()):
        rules.append(_rule(group, resources, verbs_key))
    return rules


def _held_rules(obj: Mapping[str, Any]) -> list[dict[str, Any]]:
    if _is_aggregated(obj):
        name = str((obj.get("metadata") or {}).get("name") or "")
        return [_rule(_RBAC, ["clusterroles"], ["bind", "escalate"], [name])]
    # Copied as they are, keys in kubectl's order for reading.
    return [{k: rule[k] for k in _RULE_KEYS if k in rule} for rule in obj.get("rules") or ()]


def _unique(rules: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    seen: dict[str, dict[str, Any]] = {}
    for rule in rules:
        seen.setdefault(json.dumps(rule, sort_keys=True), rule)
    return list(seen.values())


def _finalizer_rules(extension_name: str) -> list[dict[str, Any]]:
    return [
        _rule(names.GROUP, ["clusterextensions/finalizers"], ["update"], [extension_name]),
        _rule(names.GROUP, ["clusterobjectsets/finalizers"], ["update"]),
    ]


def _role(kind: str, name: str, namespace: str, rules: list[dict[str, Any]]) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if namespace:
        metadata["namespace"] = namespace
    return {"apiVersion": _RBAC_V1, "kind": kind, "metadata": metadata, "rules": rules}


def _binding(kind: str, role_kind: str, name: str, namespace: str, subject: dict[str, str]) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if namespace:
        metadata["namespace"] = namespace
    return {
        "apiVersion": _RBAC_V1,
        "kind": kind,
        "metadata": metadata,
        "roleRef": {"apiGroup": _RBAC, "kind": role_kind, "name": name},
        "subjects": [subject],
    }


def installer_rbac(
    objects: Sequence[dict[str, Any]], *, extension_name: str, namespace: str, service_account: str
) -> list[dict[str, Any]]:
    """The ClusterRole, Roles and bindings (in that order, Roles by namespace) that let
    ServiceAccount `namespace/service_account` install, upgrade and remove `objects` as
    ClusterExtension `extension_name`. Raises ValueError for a namespaced object without a namespace."""
    stripped = [_without_rules(o) for o in objects]
    by_namespace: dict[str, list[permissions.Requirement]] = defaultdict(list)
    for requirement in permissions.requirements(stripped, _resources(objects)):
        by_namespace[requirement.namespace].append(requirement)

    held: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for obj in filter(_is_role, objects):
        role_namespace = "" if obj["kind"] == "ClusterRole" else str(obj["metadata"].get("namespace") or "")
        held[role_namespace] += _held_rules(obj)

    name = role_name(extension_name)
    subject = {"kind": "ServiceAccount", "name": service_account, "namespace": namespace}
    cluster_rules = _unique(
        [*_finalizer_rules(extension_name), *_compact(by_namespace.pop("", ())), *held.pop("", ())]
    )
    out = [
        _role("ClusterRole", name, "", cluster_rules),
        _binding("ClusterRoleBinding", "ClusterRole", name, "", subject),
    ]
    for role_namespace in sorted(by_namespace.keys() | held.keys()):
        rules = _unique([*_compact(by_namespace.get(role_namespace, ())), *held.get(role_namespace, ())])
        out.append(_role("Role", name, role_namespace, rules))
        out.append(_binding("RoleBinding", "Role", name, role_namespace, subject))
    return out
