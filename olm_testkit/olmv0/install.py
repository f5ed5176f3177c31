"""Install and remove a package through OLM v0, as a user of v0 does: an OperatorGroup and a
Subscription in a namespace, the InstallPlan approved when approval is Manual, then the CSV
Succeeded and its Deployments Available.

`install(kube, request, namespace=...)` returns an `Installation` once all that holds;
`proposed_upgrade(kube, installation)` waits for v0 to propose the channel's next bundle of a
Manual one; `removal.uninstall(kube, namespace)` removes it.
"""

from __future__ import annotations

import contextlib
import enum
import json
from dataclasses import dataclass
from typing import Any

from olm_runtime import conditions
from olm_runtime.client import Client, PatchType, errors, kinds
from olm_runtime.testing.poll import eventually
from olm_testkit.olmv0 import kinds as v0kinds

FIELD_MANAGER = "olm-v0-install"
INSTALL_TIMEOUT = 180.0


class InstallMode(enum.StrEnum):
    """Which namespaces the OperatorGroup targets, by the CSV install mode it selects."""

    ALL_NAMESPACES = "AllNamespaces"
    """No `targetNamespaces`: the operator watches every namespace."""
    OWN_NAMESPACE = "OwnNamespace"
    """`targetNamespaces: [the install namespace]`."""
    SINGLE_NAMESPACE = "SingleNamespace"
    """`targetNamespaces: [another namespace]` (`InstallRequest.target_namespace`)."""


class Approval(enum.StrEnum):
    """`spec.installPlanApproval` of the Subscription."""

    AUTOMATIC = "Automatic"
    MANUAL = "Manual"
    """v0 waits for `spec.approved: true` on each InstallPlan; `install` approves the first one."""


@dataclass(frozen=True, kw_only=True)
class InstallRequest:
    """What to subscribe to, and how."""

    package: str
    channel: str
    source: str
    """The CatalogSource's name."""
    source_namespace: str = v0kinds.NAMESPACE
    mode: InstallMode = InstallMode.ALL_NAMESPACES
    target_namespace: str | None = None
    """The namespace a SingleNamespace install watches (created if missing)."""
    approval: Approval = Approval.AUTOMATIC
    starting_csv: str | None = None
    """`spec.startingCSV`: install this bundle of the channel rather than its head."""


@dataclass(frozen=True, kw_only=True)
class Installation:
    """A package installed through v0."""

    namespace: str
    target_namespaces: tuple[str, ...]
    """The OperatorGroup's `targetNamespaces` (empty: all namespaces)."""
    operator_group: str
    subscription: str
    install_plan: str
    """The InstallPlan that installed `csv` (for Manual approval, the one `install` approved)."""
    csv: str
    """The subscribed package's CSV (`status.installedCSV`)."""
    csvs: tuple[str, ...]
    """Every CSV the InstallPlan installed (`csv` and any dependency's)."""
    crds: tuple[str, ...]
    """The CRDs v0 installed for this namespace alone (`installed_alongside`), which `uninstall`
    deletes."""


async def install(
    kube: Client, request: InstallRequest, *, namespace: str, timeout: float = INSTALL_TIMEOUT
) -> Installation:
    """Create `namespace` (and the SingleNamespace target), an OperatorGroup and a Subscription for
    `request`; approve the InstallPlan when approval is Manual; return once every CSV it installs
    has Succeeded and their Deployments are Available. On timeout, the failure shows the state of
    the Subscription, InstallPlan and CSV."""
    targets = target_namespaces(request, namespace)
    for name in {namespace, *targets}:
        await kube.apply(_namespace(name), field_manager=FIELD_MANAGER)
    await kube.apply(operator_group_object(namespace, namespace, targets), field_manager=FIELD_MANAGER)
    await kube.apply(subscription_object(request, namespace), field_manager=FIELD_MANAGER)
    watch = _Progress(kube, namespace, request.package)
    try:
        plan_name = await watch.install_plan(timeout)
        if request.approval is Approval.MANUAL:
            await approve(kube, namespace, plan_name)
        plan = await watch.plan_complete(plan_name, timeout)
        csvs = tuple(plan["spec"]["clusterServiceVersionNames"])
        for csv in csvs:
            await watch.csv_succeeded(csv, timeout)
            await deployments_available(kube, await watch.csv(csv), timeout=timeout)
        installed = await watch.installed_csv(timeout)
    except AssertionError as error:
        raise AssertionError(f"{error}\n{await watch.describe()}") from None
    return Installation(
        namespace=namespace,
        target_namespaces=targets,
        operator_group=namespace,
        subscription=request.package,
        install_plan=plan_name,
        csv=installed,
        csvs=csvs,
        crds=await installed_alongside(kube, namespace),
    )


@dataclass(frozen=True)
class ProposedUpgrade:
    """The next bundle of a Manual installation's channel, as v0 proposes it."""

    subscription: dict[str, Any]
    """The Subscription, `UpgradePending`, naming `plan`."""
    plan: dict[str, Any]
    """The InstallPlan of the upgrade, waiting for approval."""


async def proposed_upgrade(
    kube: Client, installation: Installation, *, timeout: float = 120.0
) -> ProposedUpgrade:
    """Once v0 proposes an upgrade of `installation` (Manual approval): the Subscription names an
    InstallPlan other than the install's and is `UpgradePending`, and that plan waits for approval.
    v0 plans it only after resolving again once the approved install is done, so `install`
    returning does not mean it exists yet."""
    proposed: list[ProposedUpgrade] = []

    async def upgrade_proposed() -> bool:
        subscription = await kube.get(
            v0kinds.SUBSCRIPTION, installation.subscription, namespace=installation.namespace
        )
        status = subscription.get("status") or {}
        name = (status.get("installPlanRef") or {}).get("name")
        if status.get("state") != "UpgradePending" or name in (None, installation.install_plan):
            return False
        plan = await kube.get(v0kinds.INSTALL_PLAN, name, namespace=installation.namespace)
        proposed[:] = [ProposedUpgrade(subscription, plan)]
        return (plan.get("status") or {}).get("phase") == "RequiresApproval"

    await eventually(
        upgrade_proposed, what="the Subscription to name an upgrade awaiting approval", timeout=timeout
    )
    return proposed[0]


def target_namespaces(request: InstallRequest, namespace: str) -> tuple[str, ...]:
    if request.mode is InstallMode.ALL_NAMESPACES:
        return ()
    if request.mode is InstallMode.OWN_NAMESPACE:
        return (namespace,)
    if not request.target_namespace:
        raise ValueError("a SingleNamespace install needs target_namespace")
    return (request.target_namespace,)


def operator_group_object(name: str, namespace: str, targets: tuple[str, ...]) -> dict[str, Any]:
    spec: dict[str, Any] = {"targetNamespaces": list(targets)} if targets else {}
    return {
        "apiVersion": v0kinds.OPERATOR_GROUP.api_version,
        "kind": v0kinds.OPERATOR_GROUP.kind,
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def subscription_object(request: InstallRequest, namespace: str) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "channel": request.channel,
        "name": request.package,
        "source": request.source,
        "sourceNamespace": request.source_namespace,
        "installPlanApproval": request.approval.value,
    }
    if request.starting_csv:
        spec["startingCSV"] = request.starting_csv
    return {
        "apiVersion": v0kinds.SUBSCRIPTION.api_version,
        "kind": v0kinds.SUBSCRIPTION.kind,
        "metadata": {"name": request.package, "namespace": namespace},
        "spec": spec,
    }


async def approve(kube: Client, namespace: str, plan: str) -> None:
    """`spec.approved: true`, as `kubectl patch installplan` does for a user."""
    await kube.patch(
        v0kinds.INSTALL_PLAN,
        plan,
        {"spec": {"approved": True}},
        namespace=namespace,
        patch_type=PatchType.MERGE,
    )


async def installed_alongside(kube: Client, namespace: str) -> tuple[str, ...]:
    """The CRDs owned by the CSVs in `namespace` that v0 installed for those CSVs alone: v0 marks a
    CRD it creates or updates with an `operatorframework.io/installed-alongside-<hash>` annotation
    naming `<namespace>/<csv>`, one per CSV that brought it. (The InstallPlan's step status does not
    tell: a plan executed again after a conflict marks the CRDs it created `Present`.)"""
    owned: set[str] = set()
    for csv in (await kube.list(v0kinds.CLUSTER_SERVICE_VERSION, namespace=namespace)).items:
        owned |= {
            crd["name"] for crd in (csv["spec"].get("customresourcedefinitions") or {}).get("owned") or []
        }
    alone = []
    for name in sorted(owned):
        try:
            crd = await kube.get(kinds.CUSTOM_RESOURCE_DEFINITION, name)
        except errors.NotFound:
            continue
        annotations = crd["metadata"].get("annotations") or {}
        installers = [v for k, v in annotations.items() if k.startswith(v0kinds.INSTALLED_ALONGSIDE_PREFIX)]
        if installers and all(v.startswith(f"{namespace}/") for v in installers):
            alone.append(name)
    return tuple(alone)


async def deployments_available(
    kube: Client, csv: dict[str, Any], *, timeout: float = INSTALL_TIMEOUT
) -> None:
    """Until every Deployment of the CSV's install strategy is Available at its current generation."""
    namespace = csv["metadata"]["namespace"]
    strategy = csv["spec"]["install"].get("spec") or {}
    for name in (d["name"] for d in strategy.get("deployments") or []):

        async def available(name: str = name) -> bool:
            try:
                deployment = await kube.get(kinds.DEPLOYMENT, name, namespace=namespace)
            except errors.NotFound:
                return False
            status = deployment.get("status") or {}
            return (
                status.get("observedGeneration") == deployment["metadata"]["generation"]
                and conditions.of(deployment, "Available").get("status") == "True"
            )

        await eventually(available, what=f"Deployment {namespace}/{name} to be Available", timeout=timeout)


@dataclass
class _Progress:
    """Reads the Subscription's progress, and describes it when a wait times out."""

    kube: Client
    namespace: str
    subscription: str

    async def _subscription_status(self) -> dict[str, Any]:
        found = await self.kube.get(v0kinds.SUBSCRIPTION, self.subscription, namespace=self.namespace)
        return dict(found.get("status") or {})

    async def install_plan(self, timeout: float) -> str:
        name = ""

        async def referenced() -> bool:
            nonlocal name
            name = ((await self._subscription_status()).get("installPlanRef") or {}).get("name", "")
            return bool(name)

        await eventually(
            referenced,
            what=f"Subscription {self.namespace}/{self.subscription} to name an InstallPlan",
            timeout=timeout,
        )
        return name

    async def plan_complete(self, name: str, timeout: float) -> dict[str, Any]:
        plan: dict[str, Any] = {}

        async def complete() -> bool:
            nonlocal plan
            plan = await self.kube.get(v0kinds.INSTALL_PLAN, name, namespace=self.namespace)
            phase = (plan.get("status") or {}).get("phase")
            if phase == "Failed":
                raise AssertionError(f"InstallPlan {self.namespace}/{name} Failed")
            return phase == "Complete"

        await eventually(
            complete, what=f"InstallPlan {self.namespace}/{name} to be Complete", timeout=timeout
        )
        return plan

    async def csv(self, name: str) -> dict[str, Any]:
        return await self.kube.get(v0kinds.CLUSTER_SERVICE_VERSION, name, namespace=self.namespace)

    async def csv_succeeded(self, name: str, timeout: float) -> None:
        async def succeeded() -> bool:
            try:
                csv = await self.csv(name)
            except errors.NotFound:
                return False
            return (csv.get("status") or {}).get("phase") == "Succeeded"

        await eventually(succeeded, what=f"CSV {self.namespace}/{name} to Succeed", timeout=timeout)

    async def installed_csv(self, timeout: float) -> str:
        name = ""

        async def installed() -> bool:
            nonlocal name
            name = str((await self._subscription_status()).get("installedCSV") or "")
            return bool(name)

        await eventually(
            installed,
            what=f"Subscription {self.namespace}/{self.subscription} to name its installed CSV",
            timeout=timeout,
        )
        return name

    async def describe(self) -> str:
        """The Subscription's status, its InstallPlan's and every CSV's phase in the namespace."""
        lines: list[str] = []
        with contextlib.suppress(errors.APIError):
            status = await self._subscription_status()
            lines.append(f"Subscription status: {json.dumps(status, indent=1)}")
            plan_name = (status.get("installPlanRef") or {}).get("name")
            if plan_name:
                plan = await self.kube.get(v0kinds.INSTALL_PLAN, plan_name, namespace=self.namespace)
                plan_status = {k: v for k, v in (plan.get("status") or {}).items() if k != "plan"}
                lines.append(f"InstallPlan {plan_name} status: {json.dumps(plan_status, indent=1)}")
            for csv in (
                await self.kube.list(v0kinds.CLUSTER_SERVICE_VERSION, namespace=self.namespace)
            ).items:
                status = csv.get("status") or {}
                phase = f"{status.get('phase')} {status.get('reason')}: {status.get('message')}"
                lines.append(f"CSV {csv['metadata']['name']}: {phase}")
        return "\n".join(lines)


def _namespace(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
