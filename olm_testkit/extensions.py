"""ClusterExtensions in tests and benchmarks: build them, create them, wait on them, and remove them
so that the next test finds nothing of theirs (shared by the suites that run operator-controller as
a process and as a Pod, and by the benchmarks)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from olm.api import names
from olm.api.kinds import CLUSTER_EXTENSION
from olm_runtime import conditions
from olm_runtime.client import Client, errors
from olm_runtime.testing.poll import eventually
from olm_testkit.installer import wait_custom_resources_served


def extension_object(
    name: str,
    package: str,
    namespace: str,
    service_account: str | None,
    *,
    version: str | None = None,
    channels: list[str] | None = None,
    selector: dict[str, Any] | None = None,
    upgrade_policy: str | None = None,
    crd_safety: str | None = None,
    config: dict[str, Any] | None = None,
    upgrade: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A ClusterExtension installing `package` into `namespace` as `service_account` (None: no
    `spec.serviceAccount`, as upstream's manifests may be written), with only the
    fields given: `selector` is a LabelSelector (`{"matchLabels": ...}`); `upgrade_policy` is
    `CatalogProvided` or `SelfCertified`; `crd_safety` is `Strict` or `None`; `config` is the
    inline configuration (`{"watchNamespace": ...}`); `upgrade` is `spec.upgrade`."""
    catalog: dict[str, Any] = {"packageName": package}
    if version is not None:
        catalog["version"] = version
    if channels is not None:
        catalog["channels"] = channels
    if selector is not None:
        catalog["selector"] = selector
    if upgrade_policy is not None:
        catalog["upgradeConstraintPolicy"] = upgrade_policy
    spec: dict[str, Any] = {"namespace": namespace, "source": {"sourceType": "Catalog", "catalog": catalog}}
    if service_account is not None:
        spec["serviceAccount"] = {"name": service_account}
    if crd_safety is not None:
        spec["install"] = {"preflight": {"crdUpgradeSafety": {"enforcement": crd_safety}}}
    if config is not None:
        spec["config"] = {"configType": "Inline", "inline": config}
    if upgrade is not None:
        spec["upgrade"] = upgrade
    return {
        "apiVersion": CLUSTER_EXTENSION.api_version,
        "kind": CLUSTER_EXTENSION.kind,
        "metadata": {"name": name},
        "spec": spec,
    }


@dataclass
class Extensions:
    """Creates ClusterExtensions and waits on them; deletes what it created at teardown, waiting
    until operator-controller has finalized each (it runs for the whole session)."""

    kube: Client
    created: list[str] = field(default_factory=list)

    async def create(
        self,
        name: str,
        package: str,
        namespace: str,
        service_account: str | None,
        *,
        version: str | None = None,
        channels: list[str] | None = None,
        selector: dict[str, Any] | None = None,
        upgrade_policy: str | None = None,
        crd_safety: str | None = None,
        config: dict[str, Any] | None = None,
        upgrade: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Create `extension_object(...)` of these arguments; deleted at teardown."""
        obj = extension_object(
            name,
            package,
            namespace,
            service_account,
            version=version,
            channels=channels,
            selector=selector,
            upgrade_policy=upgrade_policy,
            crd_safety=crd_safety,
            config=config,
            upgrade=upgrade,
        )
        created = dict(await self.kube.create(obj))
        self.created.append(name)
        return created

    async def get(self, name: str) -> dict[str, Any]:
        return dict(await self.kube.get(CLUSTER_EXTENSION, name))

    async def patch_spec(self, name: str, spec: dict[str, Any]) -> dict[str, Any]:
        """A JSON merge patch of `spec` (a `None` value removes a field)."""
        return dict(await self.kube.patch(CLUSTER_EXTENSION, name, {"spec": spec}))

    async def wait_for(
        self, name: str, what: str, check: Callable[[dict[str, Any]], bool], *, timeout: float = 120.0
    ) -> dict[str, Any]:
        """Until `check(extension)` holds; the extension. On timeout the failure shows its status."""
        found: dict[str, Any] = {}

        async def matches() -> bool:
            nonlocal found
            found = await self.get(name)
            return check(found)

        try:
            await eventually(matches, what=f"ClusterExtension {name}: {what}", timeout=timeout)
        except AssertionError as error:
            status_text = json.dumps(found.get("status"), indent=1)
            raise AssertionError(f"{error}\nlast status:\n{status_text}") from None
        return found

    async def wait_condition(
        self,
        name: str,
        type: str,
        status: str,
        *,
        reason: str | None = None,
        message_contains: str | None = None,
        timeout: float = 120.0,
    ) -> dict[str, Any]:
        """Wait until the condition `type` has `status` (and `reason`, and a message containing
        `message_contains`) for the current generation; the object. On timeout the failure shows
        the whole status."""

        def matches(found: dict[str, Any]) -> bool:
            cond = conditions.of(found, type)
            return (
                cond.get("status") == status
                and cond.get("observedGeneration", found["metadata"].get("generation"))
                == found["metadata"].get("generation")
                and (reason is None or cond.get("reason") == reason)
                and (message_contains is None or message_contains in str(cond.get("message", "")))
            )

        wanted = f"{type}={status}" + (f" reason={reason}" if reason else "")
        wanted += f" message~{message_contains!r}" if message_contains else ""
        return await self.wait_for(name, wanted, matches, timeout=timeout)

    async def delete_and_wait_gone(
        self, name: str, timeout: float = 120.0, *, policy: str = "Cascade"
    ) -> None:
        """Delete the extension with `spec.removal.policy` set to `policy` and wait until it is gone.
        `Cascade` by default, unlike the API: a test's leftovers (a kept CRD) must not meet the next
        test, which may install another package with the same CRD."""
        await self.wait_custom_resources_served(name)
        with contextlib.suppress(errors.NotFound):
            await self.kube.patch(CLUSTER_EXTENSION, name, {"spec": {"removal": {"policy": policy}}})
            await self.kube.delete(CLUSTER_EXTENSION, name)

        async def gone() -> bool:
            try:
                await self.kube.get(CLUSTER_EXTENSION, name)
            except errors.NotFound:
                return True
            return False

        await eventually(gone, what=f"ClusterExtension {name} to be finalized and deleted", timeout=timeout)
        if name in self.created:
            self.created.remove(name)

    async def wait_custom_resources_served(self, name: str) -> None:
        """Wait until the API server serves the kinds of the extension's CRDs (see
        `wait_custom_resources_served`: deleting them sooner can stall the removal for minutes)."""
        if len(name) > 63:
            return  # not a label value: the extension installed nothing
        await wait_custom_resources_served(self.kube, label_selector=f"{names.OWNER_NAME_LABEL}={name}")
