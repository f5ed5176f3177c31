"""The demo extension `make run` installs, here and on kind: kube-green into its own namespace, as a
ServiceAccount bound to cluster-admin for brevity (docs/operator-controller/permissions.md shows how
to scope it)."""

from __future__ import annotations

from typing import Any

from olm.api import names

PACKAGE = "kube-green"
EXTENSION = "kube-green"
NAMESPACE = "kube-green"
INSTALLER = "kube-green-installer"


def extension_objects(*, catalog: str) -> list[dict[str, Any]]:
    """Namespace, ServiceAccount, its binding and the ClusterExtension selecting `catalog` by name."""
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": INSTALLER, "namespace": NAMESPACE},
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": INSTALLER},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "cluster-admin",
            },
            "subjects": [{"kind": "ServiceAccount", "name": INSTALLER, "namespace": NAMESPACE}],
        },
        {
            "apiVersion": names.API_VERSION,
            "kind": names.CLUSTER_EXTENSION,
            "metadata": {"name": EXTENSION},
            "spec": {
                "namespace": NAMESPACE,
                "serviceAccount": {"name": INSTALLER},
                "source": {
                    "sourceType": "Catalog",
                    "catalog": {
                        "packageName": PACKAGE,
                        "selector": {"matchLabels": {names.METADATA_NAME_LABEL: catalog}},
                    },
                },
            },
        },
    ]
