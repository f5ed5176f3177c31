"""The public surface of the catalog client is pinned: changing it must be a deliberate edit here."""

from __future__ import annotations

from olm.pipeline import catalogs


def test_exported_names() -> None:
    assert sorted(catalogs.__all__) == sorted(
        [
            "CatalogClient",
            "CatalogClientError",
            "CatalogNotServing",
            "CatalogRef",
            "CatalogUnreachable",
            "ClientOptions",
            "MalformedCatalog",
            "PackageContent",
            "Statistics",
            "parse_lines",
        ]
    )
    for name in catalogs.__all__:
        assert getattr(catalogs, name) is not None


def test_errors_share_one_base() -> None:
    for error in (
        catalogs.CatalogNotServing,
        catalogs.CatalogUnreachable,
        catalogs.MalformedCatalog,
    ):
        assert issubclass(error, catalogs.CatalogClientError)
