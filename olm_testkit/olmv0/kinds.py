"""OLM v0's kinds and the names and labels it reads or writes, as upstream spells them."""

from __future__ import annotations

from olm_runtime.client import GroupVersionKind

GROUP = "operators.coreos.com"

CATALOG_SOURCE = GroupVersionKind(GROUP, "v1alpha1", "CatalogSource")
CLUSTER_SERVICE_VERSION = GroupVersionKind(GROUP, "v1alpha1", "ClusterServiceVersion")
INSTALL_PLAN = GroupVersionKind(GROUP, "v1alpha1", "InstallPlan")
SUBSCRIPTION = GroupVersionKind(GROUP, "v1alpha1", "Subscription")
OPERATOR_GROUP = GroupVersionKind(GROUP, "v1", "OperatorGroup")
OLM_CONFIG = GroupVersionKind(GROUP, "v1", "OLMConfig")
OPERATOR = GroupVersionKind(GROUP, "v1", "Operator")
"""Cluster-scoped, one per package and namespace (`<package>.<namespace>`): v0 lists in its status
the objects labelled `operators.coreos.com/<package>.<namespace>`."""

NAMESPACE = "olm"
"""Where upstream's manifests run v0 and its global catalogs live (the catalog operator's
`--namespace`): a CatalogSource here serves Subscriptions of every namespace."""
OLM_CONFIG_NAME = "cluster"
"""The one OLMConfig the olm operator reads."""

OWNER_LABEL = "olm.owner"
OWNER_KIND_LABEL = "olm.owner.kind"
OWNER_NAMESPACE_LABEL = "olm.owner.namespace"
"""v0 labels the cluster-scoped objects it makes for a CSV or an OperatorGroup (ClusterRoles and their
bindings, webhook configurations) with their owner's name, kind and namespace: a cluster-scoped object
cannot have a namespaced owner reference."""
TARGET_NAMESPACES_ANNOTATION = "olm.targetNamespaces"
"""On a CSV (and its Deployments' pod templates): the namespaces its OperatorGroup targets, comma
separated; empty for AllNamespaces."""
OPERATOR_GROUP_ANNOTATION = "olm.operatorGroup"
OPERATOR_NAMESPACE_ANNOTATION = "olm.operatorNamespace"
INSTALLED_ALONGSIDE_PREFIX = "operatorframework.io/installed-alongside-"
"""On a CRD v0 created or updated for a CSV (and on the CSV): `<namespace>/<csv>`, one such
annotation per CSV, keyed by a hash of the pair."""
