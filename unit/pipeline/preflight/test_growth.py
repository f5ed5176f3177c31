"""Permission growth between revisions (`growth`) and the gate over it (`plan.grown`): on the real
bundles of `../shared/realdata` whose RBAC grows between versions, and on small hand-made roles for
the coverage rules."""

from __future__ import annotations

from typing import Any

import pytest

from olm.api import conditions as api
from olm.api.extensionspec import (
    ExtensionSpec,
    PermissionGrowth,
    UpgradeSpec,
)
from olm.pipeline import plan, render
from olm.pipeline.preflight import growth
from olm.pipeline.resolve import Installed
from unit import realdata
from unit.pipeline.specs import CANDIDATE, INSTALLED, extension_spec

RBAC_GROUP = "rbac.authorization.k8s.io"
RBAC = f"{RBAC_GROUP}/v1"


def role(name: str, *rules: dict[str, Any], namespace: str | None = None, **extra: Any) -> dict[str, Any]:
    kind = "Role" if namespace else "ClusterRole"
    metadata = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {"apiVersion": RBAC, "kind": kind, "metadata": metadata, "rules": list(rules), **extra}


def rule(groups: list[str], resources: list[str], verbs: list[str], **extra: Any) -> dict[str, Any]:
    return {"apiGroups": groups, "resources": resources, "verbs": verbs, **extra}


def added_lines(candidate: list[dict[str, Any]], installed: list[dict[str, Any]]) -> list[str]:
    return growth.added_permissions(candidate, installed)


def rendered(package: str, version: str, namespace: str = "ns") -> list[dict[str, Any]]:
    return render.manifests_for(
        realdata.real_bundle(package, version),
        namespace,
        None,
        certificate_provider=render.CertManagerProvider(),
    )


REAL_GROWTH = [
    pytest.param(
        "infinispan",
        "2.3.0",
        "2.3.1",
        [
            f'Namespace:"" APIGroups:[{RBAC_GROUP}] Resources:[rolebindings] Verbs:[get,list,watch]',
            f'Namespace:"" APIGroups:[{RBAC_GROUP}] Resources:[roles] Verbs:[get,list,watch]',
        ],
        id="infinispan reads roles and bindings cluster-wide",
    ),
    pytest.param(
        "argocd-operator",
        "0.17.0",
        "0.18.0",
        [
            'Namespace:"" APIGroups:[certificates.k8s.io] Resources:[clustertrustbundles] '
            "Verbs:[get,list,watch]",
            'Namespace:"" APIGroups:[config.openshift.io] Resources:[authentications] Verbs:[get,list,watch]',
        ],
        id="argocd reads trust bundles and authentications",
    ),
    pytest.param(
        "kube-green",
        "0.5.2",
        "0.6.0",
        [
            # 0.6.0's manager role is aggregated: any ClusterRole labelled for it adds to it.
            'Namespace:"" APIGroups:[*] Resources:[*] Verbs:[*]',
            'Namespace:"" APIGroups:[apps] Resources:[statefulsets] Verbs:[get,list,patch,update,watch]',
            'Namespace:"" Verbs:[*] NonResourceURLs:[*]',
        ],
        id="kube-green aggregates its manager role",
    ),
]


@pytest.mark.parametrize(("package", "old", "new", "lines"), REAL_GROWTH)
def test_real_bundles_whose_rbac_grows(package: str, old: str, new: str, lines: list[str]) -> None:
    realdata.require()
    assert added_lines(rendered(package, new), rendered(package, old)) == lines


@pytest.mark.parametrize(
    ("package", "old", "new"),
    [
        ("infinispan", "2.3.1", "2.3.8"),
        ("kube-green", "0.6.0", "0.7.1"),
        ("sailoperator", "1.25.0", "1.26.0"),
    ],
)
def test_real_updates_that_grant_nothing_new(package: str, old: str, new: str) -> None:
    realdata.require()
    assert added_lines(rendered(package, new), rendered(package, old)) == []


def test_a_narrower_rule_a_renamed_role_or_a_rule_moved_into_a_role_is_not_growth() -> None:
    installed = [role("old-name", rule(["apps"], ["deployments", "statefulsets"], ["*"]))]
    candidate = [
        role("new-name", rule(["apps"], ["deployments"], ["get", "update"])),
        role("ns-role", rule(["apps"], ["statefulsets"], ["patch"], resourceNames=["one"]), namespace="ns"),
    ]
    assert added_lines(candidate, installed) == []


@pytest.mark.parametrize(
    ("installed_rule", "candidate_rule", "grows"),
    [
        (rule(["*"], ["*"], ["get"]), rule(["batch"], ["jobs"], ["get"]), False),
        (rule(["batch"], ["jobs"], ["get"]), rule(["batch"], ["jobs"], ["list"]), True),
        (rule(["batch"], ["jobs"], ["get"]), rule(["batch"], ["cronjobs"], ["get"]), True),
        (rule(["batch"], ["jobs"], ["get"], resourceNames=["a"]), rule(["batch"], ["jobs"], ["get"]), True),
        (
            {"nonResourceURLs": ["/metrics*"], "verbs": ["get"]},
            {"nonResourceURLs": ["/metrics/x"], "verbs": ["get"]},
            False,
        ),
        (
            {"nonResourceURLs": ["/metrics"], "verbs": ["get"]},
            {"nonResourceURLs": ["/healthz"], "verbs": ["get"]},
            True,
        ),
    ],
)
def test_coverage(installed_rule: dict[str, Any], candidate_rule: dict[str, Any], grows: bool) -> None:
    assert bool(added_lines([role("r", candidate_rule)], [role("r", installed_rule)])) is grows


def test_a_namespaced_rule_does_not_cover_the_same_rule_cluster_wide_or_elsewhere() -> None:
    installed = [role("r", rule(["batch"], ["jobs"], ["get"]), namespace="a")]
    assert added_lines([role("r", rule(["batch"], ["jobs"], ["get"]), namespace="b")], installed) == [
        'Namespace:"b" APIGroups:[batch] Resources:[jobs] Verbs:[get]'
    ]
    assert added_lines([role("r", rule(["batch"], ["jobs"], ["get"]))], installed) == [
        'Namespace:"" APIGroups:[batch] Resources:[jobs] Verbs:[get]'
    ]


def test_objects_other_than_roles_grant_nothing() -> None:
    binding = {"apiVersion": RBAC, "kind": "ClusterRoleBinding", "metadata": {"name": "b"}, "roleRef": {}}
    assert (
        growth.granted([binding, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}])
        == set()
    )


def spec(growth_mode: PermissionGrowth = PermissionGrowth.HOLD, approved: str | None = None) -> ExtensionSpec:
    return extension_spec(UpgradeSpec(approved_version=approved, permission_growth=growth_mode))


OLD_ROLES = [role("r", rule(["batch"], ["jobs"], ["get"]))]
NEW_ROLES = [role("r", rule(["batch"], ["jobs"], ["get", "delete"]))]


def grown(extension: ExtensionSpec, installed: Installed | None = INSTALLED) -> plan.Held | None:
    request = plan.Request(extension="x", spec=extension, installed=installed)
    return plan.grown(request, CANDIDATE, NEW_ROLES, OLD_ROLES)


def test_the_gate_holds_growth_with_exactly_the_added_lines() -> None:
    held = grown(spec())
    assert held is not None
    assert held.reason == api.REASON_PERMISSION_GROWTH
    assert held.added_permissions == ('Namespace:"" APIGroups:[batch] Resources:[jobs] Verbs:[delete]',)
    assert held.message == (
        'bundle "x.v1.1.0" (1.1.0) grants 1 permission(s) that "x.v1.0.0" does not: '
        'Namespace:"" APIGroups:[batch] Resources:[jobs] Verbs:[delete]. '
        "Set spec.upgrade.approvedVersion to 1.1.0 to approve them, or spec.upgrade.permissionGrowth to Allow"
    )


@pytest.mark.parametrize(
    ("extension", "installed"),
    [
        pytest.param(spec(), None, id="a first install"),
        pytest.param(spec(PermissionGrowth.ALLOW), INSTALLED, id="opted out"),
        pytest.param(spec(approved="1.1.0"), INSTALLED, id="approved"),
        pytest.param(spec(approved="2.0.0"), INSTALLED, id="a step on the way to an approved version"),
    ],
)
def test_the_gate_lets_through(extension: ExtensionSpec, installed: Installed | None) -> None:
    assert grown(extension, installed) is None


def test_an_older_approval_does_not_approve_a_newer_growth() -> None:
    assert grown(spec(approved="1.0.5")) is not None


def test_a_long_list_is_cut_in_the_message_but_whole_in_the_status() -> None:
    many = [role("r", rule(["g"], [f"r{i:02}" for i in range(30)], ["get"]))]
    request = plan.Request(extension="x", spec=spec(), installed=INSTALLED)
    held = plan.grown(request, CANDIDATE, many, [])
    assert held is not None
    assert len(held.added_permissions) == 30
    assert held.message.count("APIGroups:[g]") == plan.MESSAGE_LINES
    assert "; and 10 more." in held.message
