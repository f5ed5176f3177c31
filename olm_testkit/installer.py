"""A ServiceAccount bound to cluster-admin, for installing ClusterExtensions where the installer's
permissions are not what is being exercised (benchmarks, e2e suites)."""

from __future__ import annotations

from olm_runtime.client import Client, kinds
from olm_runtime.testing import settle


async def create_cluster_admin_account(kube: Client, namespace: str, account: str, *, binding: str) -> None:
    """Create the ServiceAccount `account` in `namespace` and the ClusterRoleBinding `binding` that
    grants it cluster-admin; return once the API server's authorizer has seen the binding, so a
    preflight or install made right away as the account is not refused."""
    subject = {"name": account, "namespace": namespace}
    await kube.create({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": subject})
    await kube.create(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": binding},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "cluster-admin",
            },
            "subjects": [{"kind": "ServiceAccount", **subject}],
        }
    )
    await settle.allowed(kube, settle.service_account(namespace, account), verb="*", group="*", resource="*")


async def wait_custom_resources_served(
    kube: Client, *, label_selector: str | None = None, timeout: float = 60.0
) -> None:
    """Wait until the API server serves the kinds of the CRDs `label_selector` picks (all CRDs
    without one). A CRD deleted while its storage is still initializing makes the API server's CRD
    finalizer fail ("storage is (re)initializing") and back off for minutes, so an extension removed
    seconds after its install would hang in removal far beyond any timeout; waiting here first
    avoids that."""
    crds = await kube.list(kinds.CUSTOM_RESOURCE_DEFINITION, label_selector=label_selector)
    for crd in crds.items:
        await settle.crd_served(kube, crd["metadata"]["name"], timeout=timeout)
