"""The GroupVersionKinds of OLM's own three kinds, for the runtime's dict-based client and cache.

Built-in kinds (Secret, CustomResourceDefinition, ...) are in `olm_runtime.client.kinds`.
"""

from __future__ import annotations

from typing import Final

from olm.api import names
from olm_runtime.client import GroupVersionKind

__all__ = ["CLUSTER_CATALOG", "CLUSTER_EXTENSION", "CLUSTER_OBJECT_SET"]

CLUSTER_CATALOG: Final = GroupVersionKind(names.GROUP, names.VERSION, names.CLUSTER_CATALOG)
CLUSTER_EXTENSION: Final = GroupVersionKind(names.GROUP, names.VERSION, names.CLUSTER_EXTENSION)
CLUSTER_OBJECT_SET: Final = GroupVersionKind(names.GROUP, names.VERSION, names.CLUSTER_OBJECT_SET)
