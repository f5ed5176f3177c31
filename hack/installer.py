"""A ServiceAccount bound to cluster-admin, for installing ClusterExtensions where the installer's
permissions are not what is being exercised (benchmarks, e2e suites)."""

from __future__ import annotations

from olm_runtime.client import Client


async def create_cluster_admin_account(kube: Client, namespace: str, account: str, *, binding: str) -> None:
    """Create the ServiceAccount `account` in `namespace` and the ClusterRoleBinding `binding` that
    grants it cluster-admin."""
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
