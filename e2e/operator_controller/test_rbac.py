"""The shipped RBAC of operator-controller is enough: the process runs as the `operator-controller`
ServiceAccount of `manifests/operator-controller/rbac.yaml` and installs, repairs and removes an
extension without one request being forbidden. So it does with the opt-in component
`manifests/shared-drift-watches` added (its RBAC and its flag): then the extension's Deployment is
watched by operator-controller itself and never by the extension's ServiceAccount, as the API
server's audit log shows.

The session's operator-controller (admin credentials) is stopped while this test runs, so every
reconcile of the test's extension is made by the process under test; it is started again at the
end, whatever happened. The process under test elects itself leader with a Lease in
`olmv1-system` and watches a (missing) global pull Secret there, so the Role's rules are
exercised too. That the RBAC grants nothing beyond what the code needs is checked on the manifests
themselves (`unit/operator_controller/test_manifests.py`).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from e2e.operator_controller.conftest import Extensions, ServedCatalog
from olm.api import names
from olm.api.kinds import CLUSTER_EXTENSION
from olm_runtime.client import Client, errors, kinds
from olm_runtime.testing import settle
from olm_runtime.testing.controlplane import ControlPlane
from olm_runtime.testing.poll import eventually
from olm_testkit import audit
from olm_testkit.certmanager import CertManager
from olm_testkit.deploy import kustomize
from olm_testkit.names import unique
from olm_testkit.plugin import Installer
from olm_testkit.processes import OperatorControllerProcess, token_kubeconfig

MANIFESTS = Path(__file__).resolve().parents[2] / "manifests" / "operator-controller"
SHARED_DRIFT_WATCHES = MANIFESTS.parent / "shared-drift-watches"
SERVICE_ACCOUNT = "operator-controller"
USERNAME = f"system:serviceaccount:{names.DEFAULT_SYSTEM_NAMESPACE}:{SERVICE_ACCOUNT}"
NOT_EXERCISED: dict[tuple[str, str], str] = {
    ("update", "clusterextensions/finalizers"): (
        "authorised by the OwnerReferencesPermissionEnforcement admission plugin while a revision is "
        "created with a blocking owner reference to its extension: a check, not a request of its own"
    ),
    ("update", "clusterobjectsets/finalizers"): "the same, for the content Secrets' owner reference",
    ("get", "serviceaccounts"): "an extension's ServiceAccount the informer has not seen yet",
    ("get", "clusterobjectsets"): "naming the owner of a revision that holds a colliding object",
    ("delete", "secrets"): (
        "the Secrets of a deleted revision, when the garbage collector has not removed them first"
    ),
}
"""Verbs (on a resource) that the role must grant for a path this test cannot reach, and why. Beside
these, a `list` is not expected where a `watch` of the same resource was made: informers start with
a streaming list (a watch) and list page by page only when that fails."""
FIELD_MANAGER = "e2e-manifests"
RBAC_KINDS = ("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")


def _with_component(directory: Path) -> list[dict[str, Any]]:
    """operator-controller's objects with the shared-drift-watches component, as `kubectl apply -k`
    builds an overlay that lists both."""
    directory.mkdir()
    (directory / "kustomization.yaml").write_text(
        kustomize.overlay([MANIFESTS], [], relative_to=directory, components=[SHARED_DRIFT_WATCHES])
    )
    return kustomize.build(directory)


def _args(objects: list[dict[str, Any]]) -> list[str]:
    (deployment,) = [o for o in objects if o["kind"] == "Deployment"]
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    return list(container["args"])


async def _service_account_kubeconfig(
    kube: Client, control_plane: ControlPlane, path: Path, documents: list[dict[str, Any]]
) -> Path:
    """Install the ServiceAccount and RBAC of `documents` for real; write a kubeconfig with a
    one-hour token of that ServiceAccount, so the process has exactly the shipped permissions, once
    the API server's authorizer has seen every binding (a request refused before that would fail the
    test's "not one forbidden" for a reason not in question)."""
    rbac = [d for d in documents if d["kind"] in RBAC_KINDS]
    for document in rbac:
        await kube.apply(document, field_manager=FIELD_MANAGER, force=True)
    await settle.granted(kube, rbac)
    return await token_kubeconfig(
        kube, control_plane, namespace=names.DEFAULT_SYSTEM_NAMESPACE, name=SERVICE_ACCOUNT, path=path
    )


@pytest.fixture(params=[False, True], ids=["shipped", "shared-drift-watches"])
def shared_drift_watches(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


@dataclass(frozen=True)
class ShippedProcess:
    process: OperatorControllerProcess
    documents: list[dict[str, Any]]
    """The manifests whose RBAC it runs with."""
    audit_from: int
    """Where the audit log stood before it started: its informers' lists and watches come after."""


@pytest.fixture
async def shipped_rbac_process(
    operator_controller: OperatorControllerProcess,
    kube: Client,
    control_plane: ControlPlane,
    tmp_path: Path,
    shared_drift_watches: bool,
) -> AsyncIterator[ShippedProcess]:
    """operator-controller as the shipped ServiceAccount, in place of the session's process (which
    is restarted afterwards, even when the test fails)."""
    shipped = kustomize.build(MANIFESTS)
    documents = _with_component(tmp_path / "overlay") if shared_drift_watches else shipped
    kubeconfig = await _service_account_kubeconfig(kube, control_plane, tmp_path / "kubeconfig", documents)
    process = OperatorControllerProcess(
        control_plane,
        tmp_path / "operator-controller",
        leader_elect=True,
        lease_name=unique("operator-controller-rbac"),
        kubeconfig=kubeconfig,
        extra_args=(
            # The name the Role lets it watch (and the session never creates): absent, so pulls are
            # anonymous.
            f"--global-pull-secret={names.DEFAULT_SYSTEM_NAMESPACE}/olm-global-pull-secret",
            # What the component adds (`--shared-drift-watches`), nothing when it is not used.
            *(a for a in _args(documents) if a not in _args(shipped)),
        ),
    )
    operator_controller.stop()
    try:
        audit_from = control_plane.audit_log.stat().st_size
        process.start()
        await process.wait_ready()
        yield ShippedProcess(process, documents, audit_from)
    finally:
        try:
            process.stop()  # kills the process and raises if it does not stop on SIGTERM
        finally:
            operator_controller.start()
            await operator_controller.wait_ready()


async def _events_about(kube: Client, name: str) -> list[dict[str, Any]]:
    """The Events operator-controller wrote about the cluster-scoped object `name`."""
    listed = await kube.list(kinds.EVENTS_EVENT, namespace="default")
    return [
        e
        for e in listed.items
        if (e.get("regarding") or {}).get("name") == name
        and e.get("reportingController") == "operator-controller"
    ]


async def test_installs_repairs_and_removes_an_extension_with_the_shipped_rbac(
    *,
    namespace: str,
    installer: Installer,
    extensions: Extensions,
    fixture_catalog: ServedCatalog,
    shipped_rbac_process: ShippedProcess,
    shared_drift_watches: bool,
    control_plane: ControlPlane,
) -> None:
    process = shipped_rbac_process.process
    kube = extensions.kube
    account = await installer(namespace)
    audit_from = control_plane.audit_log.stat().st_size
    name = unique("rbac")
    try:
        # A repeated Event is written once, then patched as a series: an extension that names no
        # ServiceAccount is held with a warning (the shipped operator-controller has no default
        # installer), and a change of its spec repeats the warning word for word.
        held = unique("rbac-held")
        selector = {"matchLabels": fixture_catalog.label}
        await extensions.create(held, "test", namespace, None, version="1.0.0", selector=selector)
        await eventually(
            lambda: _has_events(kube, held, {"ServiceAccountRequired"}), what=f"the warning about {held}"
        )
        await kube.patch(CLUSTER_EXTENSION, held, {"spec": {"source": {"catalog": {"channels": ["stable"]}}}})
        await eventually(
            lambda: _repeated(kube, held, "ServiceAccountRequired"),
            what=f"the repeated warning about {held} written as a series",
            timeout=30,
        )
        await extensions.delete_and_wait_gone(held)

        await extensions.create(name, "test", namespace, account, version="1.0.0", selector=selector)
        found = await extensions.wait_condition(name, "Installed", "True", reason="Succeeded", timeout=180)
        assert found["status"]["install"]["bundle"]["version"] == "1.0.0"
        await eventually(
            lambda: _has_events(kube, name, {"Resolved", "Installing", "Installed"}),
            what=f"the Events of ClusterExtension {name}",
        )

        # Drift detection watches the managed kinds as the extension's ServiceAccount (the process's
        # own identity may not read Deployments at all), or, with shared drift watches, as itself.
        deployment = await kube.get(kinds.DEPLOYMENT, "test-operator", namespace=namespace)
        await kube.delete(kinds.DEPLOYMENT, "test-operator", namespace=namespace)
        await eventually(
            lambda: _recreated(kube, namespace, deployment["metadata"]["uid"]),
            what="the deleted Deployment to be restored",
        )

        # Removal: revisions deleted, their objects torn down as the ServiceAccount, finalizers dropped.
        await extensions.delete_and_wait_gone(name)
        # Secure /metrics: the process reviews the scraper's token and access.
        assert "controller_runtime_reconcile_total" in await process.scrape()
    except AssertionError as error:
        raise AssertionError(f"{error}\n--- operator-controller log ---\n{process.log_tail(150)}") from None
    log = await asyncio.to_thread(process.log_file.read_text, errors="replace")
    forbidden = [line for line in log.splitlines() if "forbidden" in line.lower()]
    assert not forbidden, "\n".join(forbidden[:20])
    # Stopped, so its Lease is released and its watches end: every request it made is in the log.
    assert process.stop() == 0, process.log_tail()
    await _every_request_covered_and_every_rule_used(control_plane, shipped_rbac_process)
    watchers = await asyncio.to_thread(_deployment_watchers, control_plane.audit_log, audit_from)
    ours = f"system:serviceaccount:{names.DEFAULT_SYSTEM_NAMESPACE}:{SERVICE_ACCOUNT}"
    theirs = f"system:serviceaccount:{namespace}:{account}"
    assert (ours in watchers, theirs in watchers) == (shared_drift_watches, not shared_drift_watches), (
        watchers
    )


async def _every_request_covered_and_every_rule_used(
    control_plane: ControlPlane, shipped: ShippedProcess
) -> None:
    """The audit log of the process's own token: no request refused or outside the bound roles, and
    no rule that no request used (but those in `NOT_EXERCISED`)."""
    assert shipped.process.kubeconfig is not None
    config = yaml.safe_load(await asyncio.to_thread(shipped.process.kubeconfig.read_text))
    credential = audit.credential_id(config["users"][0]["user"]["token"])
    requests = await asyncio.to_thread(
        audit.read, control_plane.audit_log, shipped.audit_from, username=USERNAME, credential=credential
    )
    roles = audit.bound_roles(shipped.documents, names.DEFAULT_SYSTEM_NAMESPACE, SERVICE_ACCOUNT)
    grants = audit.grants(roles)
    for line, count in audit.summary(requests).items():
        print(f"  {count:5d}  {line}")
    assert audit.refused(requests) == []
    assert audit.uncovered(requests, grants) == []
    watched = {(r.group, r.resource) for r in requests if r.verb == "watch"}
    unused = [
        g.describe()
        for g in audit.unused(grants, requests)
        if (g.verb, g.resource) not in NOT_EXERCISED
        and not (g.verb == "list" and (g.group, g.resource) in watched)
        # The component grants the kinds bundles commonly ship; one the test bundle lacks is not watched.
        and not (g.role.endswith("-shared-drift-watches") and (g.group, g.resource) not in watched)
    ]
    assert unused == [], "\n".join(unused)


def _deployment_watchers(audit_log: Path, offset: int) -> set[str]:
    """Who watched Deployments since `offset` of the audit log (a list, then a watch, each logged)."""
    with audit_log.open("rb") as log:
        log.seek(offset)
        events = [json.loads(line) for line in log if line.strip()]
    return {
        str(e["user"]["username"])
        for e in events
        if e.get("verb") == "watch" and (e.get("objectRef") or {}).get("resource") == "deployments"
    }


async def _has_events(kube: Client, name: str, reasons: set[str]) -> bool:
    return reasons <= {str(e.get("reason")) for e in await _events_about(kube, name)}


async def _repeated(kube: Client, name: str, reason: str) -> bool:
    """Whether an Event operator-controller wrote about `name` with `reason` counts a repeat."""
    return any(
        int((e.get("series") or {}).get("count") or 1) >= 2
        for e in await _events_about(kube, name)
        if e.get("reason") == reason
    )


async def _recreated(kube: Client, namespace: str, old_uid: str) -> bool:
    try:
        current = await kube.get(kinds.DEPLOYMENT, "test-operator", namespace=namespace)
    except errors.NotFound:
        return False
    return bool(current["metadata"]["uid"] != old_uid)


@pytest.mark.parametrize(
    "document",
    [pytest.param(d, id=f"{d['kind']}-{d['metadata']['name']}") for d in kustomize.build(MANIFESTS)],
)
async def test_each_manifest_is_accepted_by_the_api_server(
    document: dict[str, Any], kube: Client, olm_crds: None, cert_manager: CertManager
) -> None:
    """Server-side dry run: schema, defaulting and admission of every shipped object (cert-manager's
    kinds against the CRDs of the pinned cert-manager release)."""
    applied = await kube.apply(document, field_manager=FIELD_MANAGER, force=True, dry_run=True)
    assert applied["kind"] == document["kind"]
    assert applied["metadata"]["name"] == document["metadata"]["name"]
