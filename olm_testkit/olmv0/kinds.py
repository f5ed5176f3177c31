"""OLM v0's kinds and the names and labels it reads or writes, as upstream spells them."""

from __future__ import annotations

from olm.cli.migrate.v0 import (
    CATALOG_SOURCE,
    GROUP,
    INSTALL_PLAN,
    INSTALLED_ALONGSIDE_PREFIX,
    OPERATOR,
    OPERATOR_GROUP,
    OWNER_KIND_LABEL,
    OWNER_LABEL,
    OWNER_NAMESPACE_LABEL,
    SUBSCRIPTION,
)
from olm.cli.migrate.v0 import CSV as CLUSTER_SERVICE_VERSION
from olm_runtime.client import GroupVersionKind

__all__ = [
    "CATALOG_SOURCE",
    "CLUSTER_SERVICE_VERSION",
    "GROUP",
    "INSTALLED_ALONGSIDE_PREFIX",
    "INSTALL_PLAN",
    "NAMESPACE",
    "OLM_CONFIG",
    "OLM_CONFIG_NAME",
    "OPERATOR",
    "OPERATOR_GROUP",
    "OPERATOR_GROUP_ANNOTATION",
    "OPERATOR_NAMESPACE_ANNOTATION",
    "OWNER_KIND_LABEL",
    "OWNER_LABEL",
    "OWNER_NAMESPACE_LABEL",
    "SUBSCRIPTION",
    "TARGET_NAMESPACES_ANNOTATION",
]

# The kinds and labels `olmctl migrate` reads are its own (`olm.cli.migrate.v0`); these are the ones
# only running v0 needs.
OLM_CONFIG = GroupVersionKind(GROUP, "v1", "OLMConfig")

NAMESPACE = "olm"
"""Where upstream's manifests run v0 and its global catalogs live (the catalog operator's
`--namespace`): a CatalogSource here serves Subscriptions of every namespace."""
OLM_CONFIG_NAME = "cluster"
"""The one OLMConfig the olm operator reads."""

TARGET_NAMESPACES_ANNOTATION = "olm.targetNamespaces"
"""On a CSV (and its Deployments' pod templates): the namespaces its OperatorGroup targets, comma
separated; empty for AllNamespaces."""
OPERATOR_GROUP_ANNOTATION = "olm.operatorGroup"
OPERATOR_NAMESPACE_ANNOTATION = "olm.operatorNamespace"
