"""The GroupVersionKinds of OLM's own three kinds and of the OLM v0 kind it serves
(OperatorCondition), for the runtime's dict-based client and cache.

Built-in kinds (Secret, CustomResourceDefinition, ...) are in `olm_runtime.client.kinds`.
"""

from __future__ import annotations

from typing import Final

from olm.api import names
from olm_runtime.client import GroupVersionKind

__all__ = ["CLUSTER_CATALOG", "CLUSTER_EXTENSION", "CLUSTER_OBJECT_SET", "OPERATOR_CONDITION"]

CLUSTER_CATALOG: Final = GroupVersionKind(names.GROUP, names.VERSION, names.CLUSTER_CATALOG)
CLUSTER_EXTENSION: Final = GroupVersionKind(names.GROUP, names.VERSION, names.CLUSTER_EXTENSION)
CLUSTER_OBJECT_SET: Final = GroupVersionKind(names.GROUP, names.VERSION, names.CLUSTER_OBJECT_SET)
OPERATOR_CONDITION: Final = GroupVersionKind(
    names.OPERATOR_CONDITION_GROUP, names.OPERATOR_CONDITION_VERSION, names.OPERATOR_CONDITION
)
