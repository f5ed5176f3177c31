"""The permission preflight asks the real API server about a ServiceAccount's RBAC and finds exactly
what it lacks: everything without RBAC, the rest of a partial grant, nothing for cluster-admin; roles
it may create but whose rules it does not hold; and kinds no API serves are skipped."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from olm.pipeline.preflight import permissions
from olm.pipeline.preflight.permissions import MissingPermissionsError, Requirement
from olm.pipeline.render import CertManagerProvider, manifests_for
from olm.registryv1.bundle import load_bundle
from olm_runtime.client import Client, GroupVersionKind, NoKindMatch, errors, kinds
from olm_runtime.testing import settle

RBAC = "rbac.authorization.k8s.io"
BUNDLE = (
    Path(__file__).resolve().parents[2] / ".." / "shared" / "realdata" / "bundles" / "kube-green" / "0.7.1"
)
SA = "installer"


def rbac(kind: str, name: str, namespace: str | None = None, **fields: Any) -> dict[str, Any]:
    metadata = {"name": name} | ({"namespace": namespace} if namespace else {})
    return {"apiVersion": f"{RBAC}/v1", "kind": kind, "metadata": metadata, **fields}


def rule(groups: list[str], resources: list[str], verbs: list[str]) -> dict[str, Any]:
    return {"apiGroups": groups, "resources": resources, "verbs": verbs}


def binding_for(
    kind: str, name: str, role_kind: str, role: str, *, subject_namespace: str, namespace: str | None = None
) -> dict[str, Any]:
    return rbac(
        kind,
        name,
        namespace,
        roleRef={"apiGroup": RBAC, "kind": role_kind, "name": role},
        subjects=[{"kind": "ServiceAccount", "name": SA, "namespace": subject_namespace}],
    )


async def discovered(client: Client, objects: Sequence[Mapping[str, Any]]) -> permissions.Resources:
    """What discovery says about the objects' kinds, as `requirements` takes it."""
    table: dict[tuple[str, str], tuple[str, bool]] = {}
    for obj in objects:
        key = (obj["apiVersion"], obj["kind"])
        with contextlib.suppress(NoKindMatch):
            info = await client.resource_for(GroupVersionKind.from_api_version(*key))
            table[key] = (info.gvr.resource, info.namespaced)
    return lambda api_version, kind: table.get((api_version, kind))


@pytest.fixture
async def service_account(admin_client: Client, namespace: str) -> str:
    """A ServiceAccount with no RBAC of its own."""
    await admin_client.create(
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": SA, "namespace": namespace}}
    )
    return SA


@pytest.fixture
async def cluster_scoped(admin_client: Client) -> AsyncIterator[list[tuple[GroupVersionKind, str]]]:
    """Cluster-scoped objects a test creates (ClusterRoles, ClusterRoleBindings), deleted after it."""
    created: list[tuple[GroupVersionKind, str]] = []
    yield created
    for gvk, name in reversed(created):
        with contextlib.suppress(errors.NotFound):
            await admin_client.delete(gvk, name)


@pytest.fixture
def kube_green(namespace: str) -> list[dict[str, Any]]:
    """kube-green 0.7.1 rendered for the test namespace: a Deployment, Services, webhook, a CRD,
    ClusterRoles with 13 rules and their bindings, and cert-manager objects."""
    if not BUNDLE.is_dir():
        pytest.skip(f"shared real data not found at {BUNDLE.resolve()}")
    return manifests_for(load_bundle(BUNDLE), namespace, None, certificate_provider=CertManagerProvider())


async def missing(client: Client, namespace: str, objects: Sequence[Mapping[str, Any]]) -> list[Requirement]:
    return await permissions.missing_permissions(
        client, namespace=namespace, service_account=SA, objects=objects
    )


async def test_without_rbac_every_requirement_of_a_real_bundle_is_missing_sorted(
    admin_client: Client, namespace: str, service_account: str, kube_green: list[dict[str, Any]]
) -> None:
    expected = permissions.requirements(kube_green, await discovered(admin_client, kube_green))
    result = await missing(admin_client, namespace, kube_green)
    assert result == expected
    assert result == sorted(result)
    # objects by name in their namespace, create per resource, and the rules of the bundle's ClusterRoles
    assert Requirement(namespace, "apps", "deployments", "kube-green-controller-manager", "patch") in result
    assert Requirement(namespace, "", "services", "", "create") in result
    assert Requirement("", "coordination.k8s.io", "leases", "", "watch") in result
    assert Requirement("", "", "", "", "get", "/metrics") in result
    message = str(MissingPermissionsError(result))
    assert message.startswith(
        "pre-authorization failed: service account requires the following permissions to manage cluster "
        'extension:\n  Namespace:"" APIGroups:[] Resources:[configmaps] '
        "Verbs:[create,delete,get,list,patch,update,watch]\n"
    )
    assert (
        f'\n  Namespace:"{namespace}" APIGroups:[apps] Resources:[deployments] '
        "ResourceNames:[kube-green-controller-manager] Verbs:[delete,get,patch,update]\n"
    ) in message


async def test_a_partial_grant_leaves_exactly_the_rest_missing(
    admin_client: Client,
    namespace: str,
    service_account: str,
    kube_green: list[dict[str, Any]],
    cluster_scoped: list[tuple[GroupVersionKind, str]],
) -> None:
    core = f"{namespace}-core"
    await admin_client.create(rbac("ClusterRole", core, rules=[rule([""], ["*"], ["*"])]))
    cluster_scoped.append((kinds.CLUSTER_ROLE, core))
    await admin_client.create(
        binding_for("ClusterRoleBinding", core, "ClusterRole", core, subject_namespace=namespace)
    )
    cluster_scoped.append((kinds.CLUSTER_ROLE_BINDING, core))
    await admin_client.create(
        rbac("Role", "deploy", namespace, rules=[rule(["apps"], ["deployments"], ["*"])])
    )
    await admin_client.create(
        binding_for(
            "RoleBinding", "deploy", "Role", "deploy", subject_namespace=namespace, namespace=namespace
        )
    )
    account = settle.service_account(namespace, SA)
    await settle.allowed(admin_client, account, verb="list", resource="secrets")
    await settle.allowed(
        admin_client, account, verb="create", group="apps", resource="deployments", namespace=namespace
    )

    everything = permissions.requirements(kube_green, await discovered(admin_client, kube_green))
    result = await missing(admin_client, namespace, kube_green)

    def covered(r: Requirement) -> bool:
        core_group = r.api_group == "" and not r.non_resource_url
        deployments_here = (r.namespace, r.api_group, r.resource) == (namespace, "apps", "deployments")
        return core_group or deployments_here

    assert result == [r for r in everything if not covered(r)]
    assert any(covered(r) for r in everything)
    # the Role grants deployments in the namespace only; the bundle's ClusterRole grants them everywhere
    assert Requirement("", "apps", "deployments", "", "patch") in result


async def test_cluster_admin_lacks_nothing(
    admin_client: Client,
    namespace: str,
    service_account: str,
    kube_green: list[dict[str, Any]],
    cluster_scoped: list[tuple[GroupVersionKind, str]],
) -> None:
    name = f"{namespace}-admin"
    await admin_client.create(
        binding_for("ClusterRoleBinding", name, "ClusterRole", "cluster-admin", subject_namespace=namespace)
    )
    cluster_scoped.append((kinds.CLUSTER_ROLE_BINDING, name))
    await settle.allowed(
        admin_client, settle.service_account(namespace, SA), verb="*", group="*", resource="*"
    )
    assert await missing(admin_client, namespace, kube_green) == []


async def test_creating_roles_needs_their_rules_or_escalate_and_then_bind_for_their_bindings(
    admin_client: Client, namespace: str, service_account: str
) -> None:
    grants = rbac("Role", "grants-secrets", namespace, rules=[rule([""], ["secrets"], ["get", "list"])])
    binds = binding_for(
        "RoleBinding",
        "grants-secrets",
        "Role",
        "grants-secrets",
        subject_namespace=namespace,
        namespace=namespace,
    )
    objects = [grants, binds]
    writes = ["create", "delete", "get", "patch", "update"]
    await admin_client.create(
        rbac("Role", "rbac-writer", namespace, rules=[rule([RBAC], ["roles", "rolebindings"], writes)])
    )
    await admin_client.create(
        binding_for(
            "RoleBinding",
            "rbac-writer",
            "Role",
            "rbac-writer",
            subject_namespace=namespace,
            namespace=namespace,
        )
    )
    account = settle.service_account(namespace, SA)
    await settle.allowed(
        admin_client, account, verb="create", group=RBAC, resource="roles", namespace=namespace
    )

    # may write roles but holds none of the rules it would grant: the rules are reported
    assert await missing(admin_client, namespace, objects) == [
        Requirement(namespace, "", "secrets", "", "get"),
        Requirement(namespace, "", "secrets", "", "list"),
    ]
    as_sa = admin_client.for_service_account(namespace, SA)
    with pytest.raises(errors.Forbidden):
        await as_sa.create(grants)

    # may escalate: the role no longer needs its rules, but binding it needs bind
    await admin_client.apply(
        rbac(
            "Role",
            "rbac-writer",
            namespace,
            rules=[rule([RBAC], ["roles", "rolebindings"], writes), rule([RBAC], ["roles"], ["escalate"])],
        ),
        force=True,
    )
    await settle.allowed(
        admin_client,
        account,
        verb="escalate",
        group=RBAC,
        resource="roles",
        namespace=namespace,
        name="grants-secrets",
    )
    assert await missing(admin_client, namespace, objects) == [
        Requirement(namespace, RBAC, "roles", "grants-secrets", "bind")
    ]
    await as_sa.create(grants)
    with pytest.raises(errors.Forbidden):
        await as_sa.create(binds)

    # and with bind, nothing is missing: the API server agrees
    await admin_client.apply(
        rbac(
            "Role",
            "rbac-writer",
            namespace,
            rules=[
                rule([RBAC], ["roles", "rolebindings"], writes),
                rule([RBAC], ["roles"], ["escalate", "bind"]),
            ],
        ),
        force=True,
    )
    await settle.allowed(
        admin_client,
        account,
        verb="bind",
        group=RBAC,
        resource="roles",
        namespace=namespace,
        name="grants-secrets",
    )
    assert await missing(admin_client, namespace, objects) == []
    await as_sa.create(binds)


async def test_kinds_no_api_serves_are_skipped_unless_the_rollout_brings_their_crd(
    admin_client: Client, namespace: str, service_account: str
) -> None:
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": namespace}}
    group = f"{namespace}.example.com"
    widget = {
        "apiVersion": f"{group}/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": namespace},
    }
    on_config_map = sorted(
        [Requirement(namespace, "", "configmaps", "cm", v) for v in ("delete", "get", "patch", "update")]
        + [Requirement(namespace, "", "configmaps", "", "create")]
    )
    assert await missing(admin_client, namespace, [config_map, widget]) == on_config_map

    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{group}"},
        "spec": {
            "group": group,
            "names": {"kind": "Widget", "plural": "widgets"},
            "scope": "Namespaced",
            "versions": [{"name": "v1", "served": True, "storage": True}],
        },
    }
    result = await missing(admin_client, namespace, [config_map, widget, crd])
    crd_resource = ("", "apiextensions.k8s.io", "customresourcedefinitions")
    assert [r for r in result if (r.namespace, r.api_group, r.resource) == crd_resource] == sorted(
        [Requirement(*crd_resource, f"widgets.{group}", v) for v in ("delete", "get", "patch", "update")]
        + [Requirement(*crd_resource, "", "create")]
    )
    assert [r for r in result if r.api_group == group] == sorted(
        [Requirement(namespace, group, "widgets", "w", v) for v in ("delete", "get", "patch", "update")]
        + [Requirement(namespace, group, "widgets", "", "create")]
    )
    assert len(result) == 15
