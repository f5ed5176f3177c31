"""`installer_rbac` on real bundles: what it grants satisfies every requirement of the permission
preflight (checked with an RBAC evaluator written here, against a kind table written here), each
object permission it adds is needed, and names are used wherever Kubernetes allows them."""

from __future__ import annotations

import fnmatch
import functools
from pathlib import Path
from typing import Any

import pytest

from olm.cli import main
from olm.cli.rbac.leastprivilege import installer_rbac, role_name
from olm.pipeline.preflight import permissions
from olm.pipeline.render import CertManagerProvider, manifests_for
from olm.registryv1.clusterserviceversion import ALL_NAMESPACES, OWN_NAMESPACE
from unit import realdata

INSTALL_NAMESPACE = "installed-here"
WATCHED_NAMESPACE = "watched-there"
SERVICE_ACCOUNT = "installer"
EXTENSION = "ext"

# The kinds the real bundles render to, as discovery on a cluster with cert-manager reports them.
KINDS: dict[tuple[str, str], tuple[str, bool]] = {
    ("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration"): (
        "mutatingwebhookconfigurations",
        False,
    ),
    ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration"): (
        "validatingwebhookconfigurations",
        False,
    ),
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition"): ("customresourcedefinitions", False),
    ("apps/v1", "Deployment"): ("deployments", True),
    ("cert-manager.io/v1", "Certificate"): ("certificates", True),
    ("cert-manager.io/v1", "Issuer"): ("issuers", True),
    ("networking.k8s.io/v1", "NetworkPolicy"): ("networkpolicies", True),
    ("rbac.authorization.k8s.io/v1", "ClusterRole"): ("clusterroles", False),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): ("clusterrolebindings", False),
    ("rbac.authorization.k8s.io/v1", "Role"): ("roles", True),
    ("rbac.authorization.k8s.io/v1", "RoleBinding"): ("rolebindings", True),
    ("v1", "ConfigMap"): ("configmaps", True),
    ("v1", "Service"): ("services", True),
    ("v1", "ServiceAccount"): ("serviceaccounts", True),
}


def known(api_version: str, kind: str) -> tuple[str, bool] | None:
    return KINDS.get((api_version, kind))


@functools.cache  # several tests render the same bundles; none changes what it gets
def rendered(path: Path, *, watch: str | None = None) -> list[dict[str, Any]]:
    """The bundle rendered as a ClusterExtension watching `watch` would be, or by default:
    AllNamespaces when supported, else OwnNamespace, else SingleNamespace watching another namespace."""
    bundle = realdata.load(path)
    modes = bundle.csv.supported_install_modes
    if watch is not None:
        config: dict[str, str] | None = {"watchNamespace": watch}
    elif ALL_NAMESPACES in modes:
        config = None
    elif OWN_NAMESPACE in modes:
        config = {"watchNamespace": INSTALL_NAMESPACE}
    else:
        config = {"watchNamespace": WATCHED_NAMESPACE}
    return manifests_for(bundle, INSTALL_NAMESPACE, config, certificate_provider=CertManagerProvider())


def rbac_for(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return installer_rbac(
        objects, extension_name=EXTENSION, namespace=INSTALL_NAMESPACE, service_account=SERVICE_ACCOUNT
    )


# --- an RBAC evaluator: which rules apply where, and whether one grants a requirement ----------


def _matches(values: list[str], wanted: str) -> bool:
    return "*" in values or wanted in values


def rule_allows(rule: dict[str, Any], r: permissions.Requirement) -> bool:
    if not _matches(rule.get("verbs") or [], r.verb):
        return False
    if r.non_resource_url:
        return any(fnmatch.fnmatchcase(r.non_resource_url, url) for url in rule.get("nonResourceURLs") or [])
    names = rule.get("resourceNames") or []
    return (
        _matches(rule.get("apiGroups") or [], r.api_group)
        and _matches(rule.get("resources") or [], r.resource)
        and (not names or r.resource_name in names)
    )


def bound_rules(rbac: list[dict[str, Any]], namespace: str) -> list[dict[str, Any]]:
    """The rules the ServiceAccount holds in `namespace` (`""`: cluster-wide) through `rbac`."""
    subject = {"kind": "ServiceAccount", "name": SERVICE_ACCOUNT, "namespace": INSTALL_NAMESPACE}
    roles = {(o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"]): o for o in rbac}
    rules: list[dict[str, Any]] = []
    for binding in rbac:
        if binding["kind"] not in ("ClusterRoleBinding", "RoleBinding") or subject not in binding["subjects"]:
            continue
        binding_namespace = binding["metadata"].get("namespace", "")
        if binding_namespace not in ("", namespace):
            continue
        ref = binding["roleRef"]
        ref_namespace = binding_namespace if ref["kind"] == "Role" else ""
        rules += roles[(ref["kind"], ref_namespace, ref["name"])]["rules"]
    return rules


def _aggregated(obj: dict[str, Any]) -> bool:
    return obj["kind"] == "ClusterRole" and bool(obj.get("aggregationRule"))


def preflight_needs(objects: list[dict[str, Any]]) -> list[permissions.Requirement]:
    """What the preflight asks of a ServiceAccount that holds the rules of the bundle's roles except
    those of aggregated ClusterRoles, which it may `escalate` (and then must `bind`), to roll them
    out as the extension's first revision."""
    plain = [{k: v for k, v in o.items() if k != "aggregationRule"} if _aggregated(o) else o for o in objects]
    needed = {*permissions.requirements(plain, known), permissions.revision_requirement(f"{EXTENSION}-1")}
    rbac_group = "rbac.authorization.k8s.io"
    for role in filter(_aggregated, objects):
        name = role["metadata"]["name"]
        needed.add(permissions.Requirement("", rbac_group, "clusterroles", name, "escalate"))
        if any(o["kind"] == "ClusterRoleBinding" and o["roleRef"]["name"] == name for o in objects):
            needed.add(permissions.Requirement("", rbac_group, "clusterroles", name, "bind"))
    return sorted(needed)


def denied(
    rbac: list[dict[str, Any]], requirements: list[permissions.Requirement]
) -> list[permissions.Requirement]:
    return [
        r for r in requirements if not any(rule_allows(rule, r) for rule in bound_rules(rbac, r.namespace))
    ]


# --- the tests ---------------------------------------------------------------------------------


@pytest.mark.parametrize("path", realdata.bundle_dirs(), ids=lambda p: f"{p.parent.name}-{p.name}")
def test_grants_every_requirement_of_the_preflight(path: Path) -> None:
    try:
        objects = rendered(path)
    except Exception as error:  # a bundle operator-controller refuses needs no RBAC
        pytest.skip(f"not renderable: {error}")
    rbac = rbac_for(objects)
    needed = preflight_needs(objects)
    assert permissions.unresolved_kinds(objects, known) == []
    assert denied(rbac, needed) == []


@pytest.mark.parametrize("path", realdata.bundle_dirs(), ids=lambda p: f"{p.parent.name}-{p.name}")
def test_names_objects_where_kubernetes_allows_and_never_lists(path: Path) -> None:
    try:
        objects = rendered(path)
    except Exception as error:
        pytest.skip(f"not renderable: {error}")
    held = [rule for o in objects if o["kind"] in ("Role", "ClusterRole") for rule in o.get("rules") or []]
    for role in rbac_for(objects):
        for rule in role.get("rules") or []:
            if any(rule == {k: h[k] for k in rule if k in h} and rule.keys() == h.keys() for h in held):
                continue  # the bundle's own rule, held as it is
            if rule["resources"] == ["clusterobjectsets/finalizers"]:
                continue  # revision names are not known in advance
            if "create" in rule["verbs"]:
                assert rule["verbs"] == ["create"], rule
                assert "resourceNames" not in rule, rule
            else:
                assert rule.get("resourceNames"), rule
            assert not {"list", "watch", "*"} & set(rule["verbs"]), rule


def test_every_object_rule_is_needed() -> None:
    """Dropping any rule the function derived (not one the bundle's roles grant) denies something."""
    objects = rendered(realdata.BUNDLES / "kube-green" / "0.7.1")
    rbac = rbac_for(objects)
    needed = [*permissions.requirements(objects, known), permissions.revision_requirement(f"{EXTENSION}-1")]
    held = [rule for o in objects if o["kind"] in ("Role", "ClusterRole") for rule in o.get("rules") or []]
    checked = 0
    for role in (o for o in rbac if o["kind"] in ("ClusterRole", "Role")):
        for index, rule in enumerate(role["rules"]):
            # The extension's finalizers: upstream's documented entry, which nothing here needs.
            if rule in held or rule["resources"] == ["clusterextensions/finalizers"]:
                continue
            reduced = [dict(o) for o in rbac]
            position = rbac.index(role)
            reduced[position] = {**role, "rules": role["rules"][:index] + role["rules"][index + 1 :]}
            assert denied(reduced, needed), f"not needed: {rule}"
            checked += 1
    assert checked >= 10


def test_kube_green_layout() -> None:
    rbac = rbac_for(rendered(realdata.BUNDLES / "kube-green" / "0.7.1"))
    name = role_name(EXTENSION)
    assert [(o["kind"], o["metadata"].get("namespace", "")) for o in rbac] == [
        ("ClusterRole", ""),
        ("ClusterRoleBinding", ""),
        ("Role", INSTALL_NAMESPACE),
        ("RoleBinding", INSTALL_NAMESPACE),
    ]
    assert {o["metadata"]["name"] for o in rbac} == {name}
    cluster_role, binding, role, _ = rbac
    assert cluster_role["rules"][:2] == [
        {
            "apiGroups": ["olm.operatorframework.io"],
            "resources": ["clusterextensions/finalizers"],
            "resourceNames": [EXTENSION],
            "verbs": ["update"],
        },
        {
            "apiGroups": ["olm.operatorframework.io"],
            "resources": ["clusterobjectsets/finalizers"],
            "verbs": ["update"],
        },
    ]
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": SERVICE_ACCOUNT, "namespace": INSTALL_NAMESPACE}
    ]
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": name,
    }
    assert {
        "apiGroups": ["apps"],
        "resources": ["deployments"],
        "resourceNames": ["kube-green-controller-manager"],
        "verbs": ["delete", "get", "patch", "update"],
    } in role["rules"]
    assert {
        "apiGroups": ["cert-manager.io"],
        "resources": ["certificates", "issuers"],
        "verbs": ["create"],
    } in role["rules"]
    assert {
        "apiGroups": ["admissionregistration.k8s.io"],
        "resources": ["validatingwebhookconfigurations"],
        "resourceNames": ["vsleepinfo.kb.io"],
        "verbs": ["delete", "get", "patch", "update"],
    } in cluster_role["rules"], "a webhook configuration is cluster-scoped whatever namespace it carries"


def test_single_namespace_rules_go_to_a_role_in_the_watched_namespace() -> None:
    objects = rendered(realdata.BUNDLES / "etcd" / "0.9.4", watch=WATCHED_NAMESPACE)
    bundle_role = next(o for o in objects if o["kind"] == "Role")
    assert bundle_role["metadata"]["namespace"] == WATCHED_NAMESPACE
    rbac = rbac_for(objects)
    watched = next(o for o in rbac if o["kind"] == "Role" and o["metadata"]["namespace"] == WATCHED_NAMESPACE)
    assert all(rule in watched["rules"] for rule in bundle_role["rules"])
    assert {
        "apiGroups": ["rbac.authorization.k8s.io"],
        "resources": ["roles"],
        "resourceNames": [bundle_role["metadata"]["name"]],
        "verbs": ["delete", "get", "patch", "update"],
    } in watched["rules"]
    cluster_role = rbac[0]
    assert not any(rule in cluster_role["rules"] for rule in bundle_role["rules"])


def test_two_versions_together_cover_the_upgrade_between_them() -> None:
    old = rendered(realdata.BUNDLES / "kube-green" / "0.7.0")
    new = rendered(realdata.BUNDLES / "kube-green" / "0.7.1")
    rbac = rbac_for(old + new)
    assert [o["kind"] for o in rbac] == ["ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"]
    assert denied(rbac, permissions.requirements(old, known)) == []
    assert denied(rbac, permissions.requirements(new, known)) == []
    assert denied(rbac_for(new), permissions.requirements(old, known)), "the old version's names differ"


def _role(kind: str, name: str, **fields: Any) -> dict[str, Any]:
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": {"name": name}, **fields}


def test_aggregated_cluster_role_is_escalated_and_bound_by_name() -> None:
    aggregated = _role(
        "ClusterRole", "view-all", aggregationRule={"clusterRoleSelectors": [{"matchLabels": {"a": "b"}}]}
    )
    binding = _role(
        "ClusterRoleBinding",
        "view-all",
        roleRef={"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view-all"},
        subjects=[{"kind": "ServiceAccount", "name": "op", "namespace": INSTALL_NAMESPACE}],
    )
    rules = rbac_for([aggregated, binding])[0]["rules"]
    assert {
        "apiGroups": ["rbac.authorization.k8s.io"],
        "resources": ["clusterroles"],
        "resourceNames": ["view-all"],
        "verbs": ["bind", "escalate"],
    } in rules
    assert not any("*" in rule["verbs"] for rule in rules)


def test_binding_to_a_role_outside_the_bundle_needs_bind_on_its_name() -> None:
    binding = _role(
        "ClusterRoleBinding",
        "delegator",
        roleRef={
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": "system:auth-delegator",
        },
        subjects=[{"kind": "ServiceAccount", "name": "op", "namespace": INSTALL_NAMESPACE}],
    )
    rules = rbac_for([binding])[0]["rules"]
    assert {
        "apiGroups": ["rbac.authorization.k8s.io"],
        "resources": ["clusterroles"],
        "resourceNames": ["system:auth-delegator"],
        "verbs": ["bind"],
    } in rules


@pytest.mark.parametrize(
    ("kind", "plural"),
    [("Issuer", "issuers"), ("NetworkPolicy", "networkpolicies"), ("PriorityClass", "priorityclasses")],
)
def test_kinds_without_a_cluster_use_kubernetes_plural_rule(kind: str, plural: str) -> None:
    obj = {"apiVersion": "example.com/v1", "kind": kind, "metadata": {"name": "x", "namespace": "n"}}
    role = rbac_for([obj])[2]
    assert role["metadata"]["namespace"] == "n"
    assert role["rules"][0]["resources"] == [plural]


def test_rbac_command_takes_several_versions_and_requires_namespace_and_account(
    capsys: pytest.CaptureFixture[str],
) -> None:
    parser = main.build_parser()
    args = parser.parse_args(
        [
            "rbac",
            "kube-green",
            "-n",
            "kg",
            "--service-account",
            "sa",
            "--version",
            "0.7.0",
            "--version",
            "0.7.1",
        ]
    )
    assert (args.command, args.version, args.output) == ("rbac", ["0.7.0", "0.7.1"], "yaml")
    for argv in (["rbac", "kube-green", "--service-account", "sa"], ["rbac", "kube-green", "-n", "kg"]):
        with pytest.raises(SystemExit) as exited:
            parser.parse_args(argv)
        assert exited.value.code == 2
    assert "required" in capsys.readouterr().err
