"""The mutating admission webhook: every ClusterCatalog carries its name as a label.

`olm.operatorframework.io/metadata.name=<name>` lets clients select catalogs by name with a label
selector (`ClusterExtension.spec.source.catalog.selector`). The label is set on CREATE and UPDATE
whatever its previous value; nothing else is touched. Registered at `PATH` on the manager's webhook
server; `manifests/catalogd/` holds the MutatingWebhookConfiguration.
"""

from __future__ import annotations

import copy

from olm.api import names
from olm_runtime.manager import webhook

PATH = "/mutate-olm-operatorframework-io-v1-clustercatalog"


async def add_name_label(request: webhook.AdmissionRequest) -> webhook.AdmissionResponse:
    """Set the name label on the ClusterCatalog being created or updated."""
    if request.operation not in ("CREATE", "UPDATE") or request.object is None:
        return webhook.allowed()
    metadata = request.object.get("metadata") or {}
    name = metadata.get("name") or request.name
    if not name:  # generateName not yet resolved: the UPDATE that follows any change labels it
        return webhook.allowed()
    if (metadata.get("labels") or {}).get(names.METADATA_NAME_LABEL) == name:
        return webhook.allowed()
    mutated = copy.deepcopy(request.object)
    labels = mutated.setdefault("metadata", {}).get("labels") or {}
    labels[names.METADATA_NAME_LABEL] = name
    mutated["metadata"]["labels"] = labels
    return webhook.patched(request.object, mutated)


def register(server: webhook.WebhookServer) -> None:
    server.register(PATH, add_name_label)
