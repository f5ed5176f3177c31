"""`olmctl rbac` proven on the real thing: for three real bundles of different shapes, a fresh
ServiceAccount given only what `olmctl rbac` prints installs, repairs (a deleted Deployment comes
back: drift detection reads as that ServiceAccount), upgrades and removes the extension, and the API
server's audit log shows not one request of that ServiceAccount refused. With one
rule left out, the permission preflight names exactly that rule.

The bundles: kube-green 0.7.0 -> 0.7.1 (a validating webhook with a cert-manager certificate; the
bundle's ClusterRoles include a non-resource URL), sail-operator 1.25.0 -> 1.25.2 (19 CRDs, the
largest about 680 kB) and etcd-operator 0.9.2 -> 0.9.4 installed SingleNamespace (its Role and
RoleBinding go to the watched namespace, not the install namespace; published here as a custom
catalog, its package has no community catalog in the data) with `spec.upgrade.readiness: Respect`
(OLM v0's OperatorCondition, its variable and its Role are part of each revision). The RBAC is
generated once for both versions (`--version old --version new`), which is how the docs tell
users to cover an upgrade.

Everything runs as a subprocess of `olmctl` against the session's control plane, catalogd,
operator-controller, registry and cert-manager; the three proofs run concurrently.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from e2e.operator_controller.conftest import CustomCatalogs, Extensions, ServedCatalog, wait_installed
from e2e.operator_controller.test_permissions_flow import PREAUTH, permission_lines
from olm.api import names
from olm.api.kinds import CLUSTER_OBJECT_SET
from olm.cli.main import EXIT_OK
from olm.cli.rbac.leastprivilege import role_name
from olm.process import testing_seams
from olm_runtime import conditions, ownerrefs
from olm_runtime.client import Client, errors, kinds, load_config
from olm_runtime.testing import settle
from olm_runtime.testing.controlplane import ControlPlane
from olm_runtime.testing.poll import eventually
from olm_runtime.testing.registry import Registry
from olm_testkit.certmanager import CertManager
from olm_testkit.images import realdata
from olm_testkit.names import unique
from olm_testkit.olmctl import Olmctl
from olm_testkit.processes import token_kubeconfig

FIELD_MANAGER = "e2e-rbac"
INSTALL_TIMEOUT = 240.0


@dataclass(frozen=True)
class Case:
    package: str
    old: str
    new: str
    catalog: ServedCatalog
    channel: str | None = None
    single_namespace: bool = False
    crd_safety: str | None = None
    readiness: str | None = None
    """`spec.upgrade.readiness`, and `olmctl rbac --readiness`: the OperatorCondition contract."""


@dataclass(frozen=True)
class Proof:
    """What the ServiceAccount did, from the audit log."""

    requests: int
    verbs: dict[str, int]
    forbidden: list[str]
    created: set[str]
    """The resources (last segment of the path) of its `create` requests."""


Pull = Callable[[str], tuple[str, ...]]
"""`pull(name)`: the flags that let olmctl pull bundles from the session's registry, with a cache
directory of its own for `name`."""


@pytest.fixture
def pull(registry: Registry, tmp_path: Path) -> Pull:
    return lambda name: (
        "--registry-ca",
        str(registry.ca_file),
        "--cache-dir",
        str(tmp_path / f"cache-{name}"),
    )


@contextlib.asynccontextmanager
async def fresh_namespaces(kube: Client, count: int) -> AsyncIterator[list[str]]:
    made = [unique("rbac-ns") for _ in range(count)]
    for name in made:
        await kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    try:
        yield made
    finally:
        for name in made:
            with contextlib.suppress(errors.NotFound):
                await kube.delete(kinds.NAMESPACE, name)


async def generated_rbac(olmctl: Olmctl, *argv: str) -> list[dict[str, Any]]:
    result = await olmctl("rbac", *argv)
    assert result.code == EXIT_OK, result.err
    return [d for d in yaml.safe_load_all(result.out) if d]


async def kube_green_rbac(
    olmctl: Olmctl, pull: Pull, catalog: ServedCatalog, *, namespace: str, account: str, name: str
) -> list[dict[str, Any]]:
    """What `olmctl rbac` prints for kube-green 0.7.1 installed as `account` by extension `name`."""
    where = ("--namespace", namespace, "--service-account", account, "--extension-name", name)
    return await generated_rbac(
        olmctl, "kube-green", *where, "--version", "0.7.1", "--catalog", catalog.name, *pull("kube-green")
    )


async def apply_all(kube: Client, documents: list[dict[str, Any]]) -> None:
    """Apply the generated RBAC; return once the API server's authorizer has seen each binding, so
    the extension created next is not preflighted, or installed, against a grant still on its way."""
    for document in documents:
        await kube.apply(document, field_manager=FIELD_MANAGER, force=True)
    await settle.granted(kube, documents)


async def delete_cluster_scoped(kube: Client, documents: list[dict[str, Any]]) -> None:
    """The generated ClusterRole and ClusterRoleBinding (the namespaces take the rest)."""
    for document in documents:
        gvk = {"ClusterRole": kinds.CLUSTER_ROLE, "ClusterRoleBinding": kinds.CLUSTER_ROLE_BINDING}.get(
            document["kind"]
        )
        if gvk is not None:
            with contextlib.suppress(errors.NotFound):
                await kube.delete(gvk, document["metadata"]["name"])


async def service_account(kube: Client, namespace: str) -> str:
    name = unique("installer")
    await kube.create(
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name, "namespace": namespace}}
    )
    return name


def audited(control_plane: ControlPlane, namespace: str, account: str) -> Proof:
    """Every request the ServiceAccount made, from the API server's audit log."""
    user = f"system:serviceaccount:{namespace}:{account}"
    verbs: dict[str, int] = {}
    forbidden: list[str] = []
    created: set[str] = set()
    requests = 0
    for line in control_plane.audit_log.read_text().splitlines():
        event = json.loads(line)
        if event.get("user", {}).get("username") != user or event.get("stage") != "ResponseComplete":
            continue
        requests += 1
        verbs[event["verb"]] = verbs.get(event["verb"], 0) + 1
        if event.get("responseStatus", {}).get("code") == 403:
            forbidden.append(f"{event['verb']} {event['requestURI']}")
        if event["verb"] == "create":
            created.add(event["requestURI"].split("?")[0].rsplit("/", 1)[-1])
    return Proof(requests=requests, verbs=verbs, forbidden=forbidden, created=created)


async def _deployment_restored(kube: Client, namespace: str, extension: str) -> None:
    """Delete one Deployment of the extension; it must come back (drift repair, as the installer:
    by its informer where the bundle's rules let it list and watch Deployments, else by polling)."""
    selector = f"{names.OWNER_NAME_LABEL}={extension}"
    (first, *_) = (await kube.list(kinds.DEPLOYMENT, namespace=namespace, label_selector=selector)).items
    name, uid = first["metadata"]["name"], first["metadata"]["uid"]
    await kube.delete(kinds.DEPLOYMENT, name, namespace=namespace)

    async def recreated() -> bool:
        try:
            current = await kube.get(kinds.DEPLOYMENT, name, namespace=namespace)
        except errors.NotFound:
            return False
        return bool(current["metadata"]["uid"] != uid)

    await eventually(recreated, what=f"Deployment {namespace}/{name} to be restored", timeout=90)


async def prove(
    case: Case,
    *,
    olmctl: Olmctl,
    pull: Pull,
    extensions: Extensions,
    control_plane: ControlPlane,
) -> Proof:
    """Generate, apply, install the old version, upgrade to the new one, remove; the audit of it."""
    kube = extensions.kube
    async with fresh_namespaces(kube, 2 if case.single_namespace else 1) as namespaces:
        namespace = namespaces[0]
        account = await service_account(kube, namespace)
        name = unique(case.package[:20])
        config = {"watchNamespace": namespaces[1]} if case.single_namespace else None
        argv = [
            case.package,
            "--namespace",
            namespace,
            "--service-account",
            account,
            "--extension-name",
            name,
        ]
        argv += ["--version", case.old, "--version", case.new, "--catalog", case.catalog.name]
        argv += pull(case.package)
        if case.channel:
            argv += ["--channel", case.channel]
        if config:
            argv += ["--watch-namespace", namespaces[1]]
        if case.readiness:
            argv += ["--readiness", case.readiness]
        rbac = await generated_rbac(olmctl, *argv)
        assert {d["metadata"]["name"] for d in rbac} == {role_name(name)}
        if case.single_namespace:
            assert ("Role", namespaces[1]) in {(d["kind"], d["metadata"].get("namespace")) for d in rbac}
        granted = {r for d in rbac for rule in d.get("rules") or () for r in rule.get("resources") or ()}
        assert ("operatorconditions" in granted) == bool(case.readiness), granted
        try:
            await apply_all(kube, rbac)
            await extensions.create(
                name,
                case.package,
                namespace,
                account,
                version=case.old,
                channels=[case.channel] if case.channel else None,
                selector={"matchLabels": case.catalog.label},
                config=config,
                crd_safety=case.crd_safety,
                upgrade={"readiness": case.readiness} if case.readiness else None,
            )
            await wait_installed(extensions, name, case.old, timeout=INSTALL_TIMEOUT)
            await _deployment_restored(kube, namespace, name)
            await extensions.patch_spec(name, {"source": {"catalog": {"version": case.new}}})
            await wait_installed(extensions, name, case.new, timeout=INSTALL_TIMEOUT)
            await extensions.delete_and_wait_gone(name, timeout=INSTALL_TIMEOUT)
            # Read before the RBAC goes: operator-controller may still reconcile a deleted revision
            # once more (a queued event), and would then be refused for a reason not in question here.
            return audited(control_plane, namespace, account)
        finally:
            await delete_cluster_scoped(kube, rbac)


@pytest.fixture
async def etcd_catalog(custom_catalogs: CustomCatalogs) -> ServedCatalog:
    """etcd-operator 0.9.2 and 0.9.4 (Own- and SingleNamespace only), the second replacing the first."""
    package = realdata.CustomPackage(
        name="etcd",
        bundle_prefix="etcdoperator",
        channel="singlenamespace-alpha",
        bundles=(
            realdata.CustomBundle(version="0.9.2", source=realdata.real_bundle("etcd", "0.9.2")),
            realdata.CustomBundle(
                version="0.9.4", source=realdata.real_bundle("etcd", "0.9.4"), replaces="etcdoperator.v0.9.2"
            ),
        ),
    )
    published = await custom_catalogs.publish((package,), repository=custom_catalogs.repository())
    return await custom_catalogs.serve(published)


async def test_generated_rbac_installs_upgrades_and_removes_three_real_bundles_without_one_forbidden_request(
    *,
    olmctl: Olmctl,
    pull: Pull,
    extensions: Extensions,
    control_plane: ControlPlane,
    community_catalog: ServedCatalog,
    etcd_catalog: ServedCatalog,
    cert_manager: CertManager,
) -> None:
    cases = [
        Case("kube-green", "0.7.0", "0.7.1", community_catalog),
        # Every sail-operator release changes its CRDs' defaults, which Strict CRD safety refuses;
        # permissions are what this test is about.
        Case("sailoperator", "1.25.0", "1.25.2", community_catalog, channel="stable-1.25", crd_safety="None"),
        # With OLM v0's OperatorCondition contract: the installer creates each version's condition
        # and grants the operator its Role, and deletes the old ones, with only what was printed.
        Case("etcd", "0.9.2", "0.9.4", etcd_catalog, single_namespace=True, readiness="Respect"),
    ]
    proofs = await asyncio.gather(
        *(
            prove(case, olmctl=olmctl, pull=pull, extensions=extensions, control_plane=control_plane)
            for case in cases
        )
    )
    for case, proof in zip(cases, proofs, strict=True):
        print(f"{case.package}: {proof.requests} requests by the installer, {proof.verbs}")
    for case, proof in zip(cases, proofs, strict=True):
        assert proof.forbidden == [], f"{case.package}: forbidden requests:\n" + "\n".join(proof.forbidden)
        # The installer did the work, and nothing else: it read, applied (server-side apply is a
        # patch, also when it creates) and deleted objects, asked what it may watch (its only
        # creates), and listed and watched where the bundle's own rules let it (drift informers).
        assert {"get", "patch", "delete"} <= proof.verbs.keys(), (case.package, proof.verbs)
        assert proof.verbs.keys() <= {"get", "patch", "delete", "create", "list", "watch"}, proof.verbs
        assert proof.created <= {"selfsubjectaccessreviews"}, (case.package, proof.created)


# kube-green's own ClusterRoles grant nothing on ServiceAccounts, so no other rule covers any of
# this one (its Deployment rule would not do: they grant all but `delete` on every Deployment).
SERVICE_ACCOUNT_RULE = {
    "apiGroups": [""],
    "resources": ["serviceaccounts"],
    "resourceNames": ["kube-green-controller-manager"],
    "verbs": ["delete", "get", "patch", "update"],
}
METRICS_RULE = {"nonResourceURLs": ["/metrics"], "verbs": ["get"]}
# Every object is applied with a blockOwnerDeletion ownerReference to its revision, which the
# control plane's OwnerReferencesPermissionEnforcement admission plugin admits only with this.
REVISION_FINALIZERS_RULE = {
    "apiGroups": [names.GROUP],
    "resources": ["clusterobjectsets/finalizers"],
    "verbs": ["update"],
}


@pytest.mark.parametrize(
    ("kind", "left_out", "line"),
    [
        pytest.param(
            "Role",
            SERVICE_ACCOUNT_RULE,
            'Namespace:"{namespace}" APIGroups:[] Resources:[serviceaccounts] '
            "ResourceNames:[kube-green-controller-manager] Verbs:[delete,get,patch,update]",
            id="an-object-of-the-bundle",
        ),
        pytest.param(
            "ClusterRole",
            METRICS_RULE,
            'Namespace:"" Verbs:[get] NonResourceURLs:[/metrics]',
            id="a-rule-the-bundle-grants",
        ),
        pytest.param(
            "ClusterRole",
            REVISION_FINALIZERS_RULE,
            'Namespace:"" APIGroups:[olm.operatorframework.io] Resources:[clusterobjectsets/finalizers] '
            "ResourceNames:[{name}-1] Verbs:[update]",
            id="the-finalizers-of-the-revision",
        ),
    ],
)
async def test_with_one_rule_left_out_the_preflight_lists_exactly_that_rule(
    *,
    kind: str,
    left_out: dict[str, Any],
    line: str,
    olmctl: Olmctl,
    pull: Pull,
    extensions: Extensions,
    community_catalog: ServedCatalog,
) -> None:
    kube = extensions.kube
    async with fresh_namespaces(kube, 1) as (namespace,):
        account = await service_account(kube, namespace)
        name = unique("green-less")
        rbac = await kube_green_rbac(
            olmctl, pull, community_catalog, namespace=namespace, account=account, name=name
        )
        role = next(d for d in rbac if d["kind"] == kind)
        assert left_out in role["rules"]
        role["rules"].remove(left_out)
        try:
            await apply_all(kube, rbac)
            await extensions.create(
                name,
                "kube-green",
                namespace,
                account,
                version="0.7.1",
                selector={"matchLabels": community_catalog.label},
            )
            found = await extensions.wait_condition(
                name,
                "Progressing",
                "True",
                reason="Retrying",
                message_contains=PREAUTH,
                timeout=INSTALL_TIMEOUT,
            )
            message = conditions.of(found, "Progressing")["message"]
            bundle = 'error for resolved bundle "kube-green.v0.7.1" with version "0.7.1": '
            assert message.startswith(bundle), message
            expected = line.format(namespace=namespace, name=name)
            assert permission_lines(message.removeprefix(bundle)) == [expected]
            assert conditions.of(found, "Installed")["status"] == "False"
            await extensions.delete_and_wait_gone(name)
        finally:
            await delete_cluster_scoped(kube, rbac)


async def test_without_the_finalizers_rule_the_api_server_refuses_the_owner_reference_to_the_revision(
    *,
    olmctl: Olmctl,
    pull: Pull,
    kube: Client,
    control_plane: ControlPlane,
    community_catalog: ServedCatalog,
    tmp_path: Path,
) -> None:
    """What the preflight's finalizers line stands for: the control plane runs the
    OwnerReferencesPermissionEnforcement admission plugin, so an installer given what `olmctl rbac`
    prints less that one rule is refused, by the API server itself, the write a rollout makes (an
    object of the bundle with its revision as controller, `blockOwnerDeletion` set); with the rule
    the same write is admitted."""
    async with fresh_namespaces(kube, 1) as (namespace,):
        account = await service_account(kube, namespace)
        name = unique("green-owned")
        rbac = await kube_green_rbac(
            olmctl, pull, community_catalog, namespace=namespace, account=account, name=name
        )
        cluster_role = next(d for d in rbac if d["kind"] == "ClusterRole")
        cluster_role["rules"].remove(REVISION_FINALIZERS_RULE)
        # An object the generated RBAC lets the installer create and patch by name.
        managed_name = "kube-green-controller-manager"
        managed: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": managed_name, "namespace": namespace},
        }
        # The revision, as operator-controller would name it; labelled out of every test
        # operator-controller's scope, so that nothing rolls it out.
        revision = {
            "apiVersion": CLUSTER_OBJECT_SET.api_version,
            "kind": CLUSTER_OBJECT_SET.kind,
            "metadata": {"name": f"{name}-1", "labels": {testing_seams.SCOPE_LABEL: namespace}},
            "spec": {
                "revision": 1,
                "lifecycleState": "Active",
                "collisionProtection": "Prevent",
                "phases": [{"name": "rbac", "objects": [{"object": managed}]}],
            },
        }
        try:
            await apply_all(kube, rbac)
            owner = await kube.create(revision)
            owned = dict(managed)
            ownerrefs.set_controller_reference(owner, owned)  # as the rollout writes it
            assert [ref["blockOwnerDeletion"] for ref in ownerrefs.owner_references(owned)] == [True]
            kubeconfig = await token_kubeconfig(
                kube, control_plane, namespace=namespace, name=account, path=tmp_path / "kubeconfig"
            )
            async with await Client.connect(await load_config(kubeconfig=kubeconfig)) as as_installer:
                with pytest.raises(errors.Forbidden) as refused:
                    await as_installer.apply(owned, field_manager=FIELD_MANAGER, force=True)
                assert "cannot set blockOwnerDeletion" in refused.value.message, refused.value.message
                with pytest.raises(errors.NotFound):
                    await kube.get(kinds.SERVICE_ACCOUNT, managed_name, namespace=namespace)

                cluster_role["rules"].append(REVISION_FINALIZERS_RULE)
                await kube.apply(cluster_role, field_manager=FIELD_MANAGER, force=True)
                await settle.allowed(
                    kube,
                    settle.service_account(namespace, account),
                    verb="update",
                    group=names.GROUP,
                    resource="clusterobjectsets",
                    subresource="finalizers",
                    name=f"{name}-1",
                )
                applied = await as_installer.apply(owned, field_manager=FIELD_MANAGER, force=True)
            controller = ownerrefs.controller_of(applied)
            assert controller is not None
            assert controller["uid"] == owner["metadata"]["uid"]
        finally:
            with contextlib.suppress(errors.NotFound):
                await kube.delete(CLUSTER_OBJECT_SET, f"{name}-1")
            await delete_cluster_scoped(kube, rbac)


async def test_the_audit_log_shows_a_refused_request_of_a_service_account(
    kube: Client, control_plane: ControlPlane, tmp_path: Path
) -> None:
    """The proof above counts refusals in the audit log; this checks that a refusal shows there."""
    async with fresh_namespaces(kube, 1) as (namespace,):
        account = await service_account(kube, namespace)
        kubeconfig = await token_kubeconfig(
            kube, control_plane, namespace=namespace, name=account, path=tmp_path / "kubeconfig"
        )
        async with await Client.connect(await load_config(kubeconfig=kubeconfig)) as as_account:
            with pytest.raises(errors.Forbidden):
                await as_account.get(kinds.SECRET, "anything", namespace=namespace)

        async def refused() -> bool:
            return audited(control_plane, namespace, account).forbidden == [
                f"get /api/v1/namespaces/{namespace}/secrets/anything"
            ]

        await eventually(refused, what="the refused request in the audit log", timeout=30)
