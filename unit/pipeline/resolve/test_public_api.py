"""The public surface of the resolver is pinned: changing it must be a deliberate edit here."""

from __future__ import annotations

from olm.pipeline import resolve


def test_exported_names() -> None:
    assert sorted(resolve.__all__) == sorted(
        [
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
    )
    for name in resolve.__all__:
        assert getattr(resolve, name) is not None


def test_errors_share_one_base() -> None:
    for error in (
        resolve.AmbiguousCatalogs,
        resolve.InvalidVersionRange,
        resolve.NoBundlesFound,
        resolve.UnsupportedDependency,
    ):
        assert issubclass(error, resolve.ResolutionError)
