"""operator-controller installs an extension as the `spec.serviceAccount` it names only while the
admission policy that guards that name is in force (docs/design/identity-policies.md).

The session's control plane has the shipped policies (the `olm_crds` fixture applies them), so the
process under test is pointed at a policy name that does not exist: the same as a cluster where the
policy was never applied or was deleted. operator-controller runs here as a process of this test
(one per cluster at a time: this directory sorts before e2e/operator_controller, whose session-wide
one starts later). The ClusterObjectSet controller's half of the check is proven in
`e2e/clusterobjectset/test_identity_policy.py`.
"""

from __future__ import annotations

from pathlib import Path

from olm.api import names
from olm.api.kinds import CLUSTER_EXTENSION, CLUSTER_OBJECT_SET
from olm_runtime import conditions
from olm_runtime.client import Client
from olm_runtime.testing.controlplane import ControlPlane
from olm_runtime.testing.poll import eventually
from olm_testkit.extensions import Extensions, extension_object
from olm_testkit.names import unique
from olm_testkit.plugin import Installer
from olm_testkit.processes import OperatorControllerProcess


async def test_an_extension_is_held_while_its_identity_policy_is_not_in_force(
    control_plane: ControlPlane,
    kube: Client,
    *,
    olm_crds: None,
    installer: Installer,
    namespace: str,
    tmp_path: Path,
) -> None:
    account = await installer(namespace)
    name = unique("guarded")
    absent = "olm-no-such-policy"
    process = OperatorControllerProcess(
        control_plane,
        tmp_path / "operator-controller",
        extra_args=(f"--clusterextension-identity-policy={absent}",),
    )
    async with process.running():
        await kube.create(extension_object(name, "no-such-package", namespace, account))
        try:
            found: dict[str, str] = {}

            async def held() -> bool:
                nonlocal found
                found = dict(conditions.of(await kube.get(CLUSTER_EXTENSION, name), "Progressing"))
                return (found.get("status"), found.get("reason")) == ("False", "Blocked")

            await eventually(held, what=f"{name} held", timeout=60)
            assert found["message"].startswith(
                f"refusing to install as ServiceAccount {namespace}/{account}: ValidatingAdmissionPolicy "
                f"{absent} or its binding is not installed"
            ), found["message"]
            assert "manifests/operator-controller/identity-policies.yaml" in found["message"]
            revisions = await kube.list(CLUSTER_OBJECT_SET, label_selector=f"{names.OWNER_NAME_LABEL}={name}")
            assert revisions.items == []  # nothing resolved, rendered or applied as the account
        finally:
            await Extensions(kube=kube).delete_and_wait_gone(name, timeout=60)
