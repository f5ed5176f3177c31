"""`spec.upgrade.readiness` against the real control plane, with a real operator-lib client.

The "operator" is `operator-condition`, a program built from the module proxy around operator-lib's
`conditions` package (`olm_testkit/gomod/operatorcondition`), run as the cat-facts operator's Pod
would run it: in-cluster config, the token of the ServiceAccount its Deployment runs as, and the
`OPERATOR_CONDITION_NAME` that operator-controller injected into that Deployment. What it may do
is what the revision's Role lets that account do, checked by the API server.

The package is the real cat-facts-operator 1.0.0 bundle published as 1.0.0 -> 1.0.1 -> 1.1.0 under
one tag catalogd polls every test minute (a second).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from e2e.operator_controller.conftest import (
    CustomCatalogs,
    Extensions,
    cat_facts_chain,
    wait_event,
    wait_installed,
)
from e2e.operator_controller.test_update_policy import installed_state, wait_update
from olm.api import conditions as api
from olm.api import names
from olm.api.kinds import OPERATOR_CONDITION
from olm_runtime import conditions
from olm_runtime.client import errors, kinds
from olm_runtime.testing.controlplane import ControlPlane
from olm_runtime.testing.poll import eventually
from olm_testkit.names import unique
from olm_testkit.operatorcondition import Completed, run_as_operator
from olm_testkit.plugin import Installer

PACKAGE = "catfacts-ready"
OPERATOR_ACCOUNT = "cat-facts-operator-controller-manager"
"""The ServiceAccount the bundle's Deployment runs as."""


def _csv(version: str) -> str:
    return f"{PACKAGE}.v{version}"


class Operator:
    """The installed operator's view: its token, its namespace, its condition's injected name."""

    def __init__(self, extensions: Extensions, plane: ControlPlane, binaries: Path, namespace: str) -> None:
        self.kube = extensions.kube
        self.plane = plane
        self.binary = binaries / "operator-condition"
        self.namespace = namespace
        self._token = ""

    async def injected_name(self) -> str:
        """`OPERATOR_CONDITION_NAME` of the Deployment's container, as operator-controller rendered it."""
        (deployment,) = (await self.kube.list(kinds.DEPLOYMENT, namespace=self.namespace)).items
        containers = deployment["spec"]["template"]["spec"]["containers"]
        values = {
            e["value"]
            for container in containers
            for e in container.get("env") or ()
            if e["name"] == names.OPERATOR_CONDITION_NAME_ENV
        }
        # Every container has it (and once: a set of one value could hide a repeat, `env` cannot).
        assert all(
            [e["name"] for e in c.get("env") or ()].count(names.OPERATOR_CONDITION_NAME_ENV) == 1
            for c in containers
        ), containers
        (value,) = values
        return str(value)

    async def token(self) -> str:
        """A token of the ServiceAccount the Deployment runs as (requested once: it outlives the test)."""
        if not self._token:
            request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}}
            answer = await self.kube.create_subresource(
                kinds.SERVICE_ACCOUNT, OPERATOR_ACCOUNT, "token", request, namespace=self.namespace
            )
            self._token = str(answer["status"]["token"])
        return self._token

    async def run(self, *args: str, condition_name: str | None = None) -> Completed:
        return await run_as_operator(
            self.binary,
            *args,
            token=await self.token(),
            namespace=self.namespace,
            condition_name=condition_name or await self.injected_name(),
            server=self.plane.server,
            ca_file=self.plane.ca_file,
        )

    async def set(self, kind: str, status: str, reason: str, message: str) -> None:
        done = await self.run("set", kind, status, reason, message)
        assert done.returncode == 0, done.stderr


async def _operator_condition(extensions: Extensions, namespace: str, version: str) -> dict[str, Any]:
    return await extensions.kube.get(OPERATOR_CONDITION, _csv(version), namespace=namespace)


async def test_the_operator_holds_its_own_updates_by_semver_class(
    namespace: str,
    installer: Installer,
    extensions: Extensions,
    *,
    custom_catalogs: CustomCatalogs,
    control_plane: ControlPlane,
    test_tool_binaries: Path,
) -> None:
    catalog = await custom_catalogs.polled(cat_facts_chain(PACKAGE, "1.0.0"), tag="ready")
    account = await installer(namespace)
    name = unique("ready")
    await extensions.create(
        name, PACKAGE, namespace, account, upgrade={"readiness": "Respect"}, **catalog.fields(namespace)
    )
    await wait_installed(extensions, name, "1.0.0")
    operator = Operator(extensions, control_plane, test_tool_binaries, namespace)

    # OLM v0's contract: the object named after the CSV, and its name where operator-lib looks.
    assert await operator.injected_name() == _csv("1.0.0")
    condition = await _operator_condition(extensions, namespace, "1.0.0")
    assert condition["spec"]["serviceAccounts"] == [OPERATOR_ACCOUNT]

    # The operator says "not now"; its Role reaches its own condition and nothing else.
    await operator.set("Upgradeable", "False", "Migrating", "moving the fact store")
    other = {
        "apiVersion": names.OPERATOR_CONDITION_API_VERSION,
        "kind": names.OPERATOR_CONDITION,
        "metadata": {"name": "someone-else.v1.0.0", "namespace": namespace},
    }
    await extensions.kube.create(other)
    refused = await operator.run(
        "set", "Upgradeable", "True", "Hijack", "x", condition_name="someone-else.v1.0.0"
    )
    assert refused.returncode != 0
    assert "forbidden" in refused.stderr
    assert "spec" not in await extensions.kube.get(
        OPERATOR_CONDITION, "someone-else.v1.0.0", namespace=namespace
    )

    # Deleted by someone else, it is restored as any object of the revision is (the operator sets
    # its conditions again on the new object, as a restarted operator would).
    uid = (await _operator_condition(extensions, namespace, "1.0.0"))["metadata"]["uid"]
    await extensions.kube.delete(OPERATOR_CONDITION, _csv("1.0.0"), namespace=namespace)

    async def restored() -> bool:
        try:
            found = await _operator_condition(extensions, namespace, "1.0.0")
        except errors.NotFound:
            return False
        return bool(found["metadata"]["uid"] != uid)

    await eventually(restored, what="the deleted OperatorCondition to be restored", timeout=90)
    await operator.set("Upgradeable", "False", "Migrating", "moving the fact store")
    before = await installed_state(extensions, name)

    # A patch update appears: held with the operator's words, and nothing of the revision moves.
    await catalog.publish(cat_facts_chain(PACKAGE, "1.0.0", "1.0.1"))
    found = await wait_update(extensions, name, available="1.0.1", held=("1.0.1", api.REASON_READINESS))
    held = conditions.of(found, api.TYPE_UPDATE_HELD)
    assert (held["status"], held["reason"]) == ("True", api.REASON_READINESS)
    assert held["message"].startswith(
        f'bundle "{_csv("1.0.1")}" (1.0.1) waits for the installed operator: OperatorCondition '
        f"{namespace}/{_csv('1.0.0')} says Upgradeable=False, reason Migrating: moving the fact store."
    )
    await wait_event(
        extensions.kube, name, type="Normal", reason="UpdateHeld", note_contains="moving the fact"
    )
    assert await installed_state(extensions, name) == before

    # Minor updates stay held, patches may go: the patch applies as soon as the operator says so.
    await operator.set("MinorUpgradeable", "False", "Schema", "minor versions change the schema")
    await operator.set("Upgradeable", "True", "Done", "migrated")
    await wait_installed(extensions, name, "1.0.1")
    await wait_update(extensions, name, available=None, held=None)
    assert await operator.injected_name() == _csv("1.0.1")

    # The new operator holds minor updates on its own new condition; a minor update waits.
    await operator.set("MinorUpgradeable", "False", "Schema", "minor versions change the schema")
    await catalog.publish(cat_facts_chain(PACKAGE, "1.0.0", "1.0.1", "1.1.0"))
    found = await wait_update(extensions, name, available="1.1.0", held=("1.1.0", api.REASON_READINESS))
    assert (
        "says MinorUpgradeable=False, reason Schema" in conditions.of(found, api.TYPE_UPDATE_HELD)["message"]
    )
    assert found["status"]["install"]["bundle"]["version"] == "1.0.1"

    # The force override (B5): the signal is reported, no longer obeyed.
    await extensions.patch_spec(name, {"upgrade": {"readiness": "Ignore"}})
    await wait_installed(extensions, name, "1.1.0")
    await wait_event(
        extensions.kube,
        name,
        type="Warning",
        reason="ReadinessIgnored",
        note_contains="says MinorUpgradeable=False",
    )

    # The replaced operators' conditions go with their archived revisions.
    async def only_the_current_one() -> bool:
        listed = (await extensions.kube.list(OPERATOR_CONDITION, namespace=namespace)).items
        return sorted(c["metadata"]["name"] for c in listed) == [_csv("1.1.0"), "someone-else.v1.0.0"]

    await eventually(only_the_current_one, what="the replaced OperatorConditions to be deleted", timeout=60)
