"""Choosing the bundle of a ClusterExtension: a pure function over the catalogs' content.

`resolve(source, installed, catalogs, skipped=...)` takes `spec.source.catalog` (a
`CatalogSource`), the installed bundle (or None) and, for each selected serving catalog, its name,
priority and content for the package (`CatalogContent`, which the catalogs stage gathers). It
returns a `Resolution`: the bundle (name, version, image, catalog) and the deprecation notices that
apply to it.

Rules, in order: channels (a bundle must be an entry of a requested channel) AND version range
(Masterminds syntax) AND, when something is installed and the policy is `CatalogProvided`, an
upgrade edge from the installed bundle (`replaces`, `skips` or `skipRange` of an entry in a
considered channel) or the installed version itself. Within a catalog, non-deprecated bundles
come first, then the highest version. Across catalogs, deprecated candidates drop out when a
non-deprecated one exists and the highest `spec.priority` wins; a tie is an error. The chosen
bundle must not declare dependencies (`olm.package.required`, `olm.gvk.required`,
`olm.constraint`).

`resolve(..., cluster=...)` also drops the bundles the cluster's Kubernetes version cannot run
(`unsupported`: the CSV's `minKubeVersion`, an `olm.kubeVersion` range), never the installed one.

`newest_update` finds the newest bundle the installed one can reach (and the path there), and
`acceptance` turns `spec.upgrade` (its automatic policy and approved version) into the `accept`
filter `resolve` narrows its candidates with.

Promises: deterministic (catalog order does not matter); the result always satisfies the range
and channel filters and is a successor of (or equal to) the installed version unless
`SelfCertified`; an error's message is upstream's, word for word, so users and scripts
recognise it, and its `explanation` says catalog by catalog why nothing was found and ends with one
`Advice` (a fixed sentence `advice_in` finds again in the Event that carries it):

    str(err):        no bundles found for package "x" matching version "9.0.0"
    err.explanation: catalogs: a (no version in range, highest 1.2.0), b (package absent),
                     c (not serving); 2 not selected by spec.source.catalog.selector;
                     change spec.source.catalog.version to include an available version
"""

from olm.pipeline.resolve._account import Advice, advice_in
from olm.pipeline.resolve._errors import (
    AmbiguousCatalogs,
    InvalidVersionRange,
    NoBundlesFound,
    ResolutionError,
    UnsupportedDependency,
)
from olm.pipeline.resolve._kube import cluster_version, unsupported
from olm.pipeline.resolve._resolver import (
    BUNDLE_PROPERTIES,
    UNSUPPORTED_DEPENDENCY_PROPERTIES,
    CatalogContent,
    Deprecation,
    Installed,
    Resolution,
    ResolvedBundle,
    SuccessorEdge,
    resolve,
    successor_edge,
)
from olm.pipeline.resolve._updates import (
    Update,
    acceptance,
    allowed_by_policy,
    newest_update,
    reachable,
    update_class,
)

__all__ = [
    "BUNDLE_PROPERTIES",
    "UNSUPPORTED_DEPENDENCY_PROPERTIES",
    "Advice",
    "AmbiguousCatalogs",
    "CatalogContent",
    "Deprecation",
    "Installed",
    "InvalidVersionRange",
    "NoBundlesFound",
    "Resolution",
    "ResolutionError",
    "ResolvedBundle",
    "SuccessorEdge",
    "UnsupportedDependency",
    "Update",
    "acceptance",
    "advice_in",
    "allowed_by_policy",
    "cluster_version",
    "newest_update",
    "reachable",
    "resolve",
    "successor_edge",
    "unsupported",
    "update_class",
]
