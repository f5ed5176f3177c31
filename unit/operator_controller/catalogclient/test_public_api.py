"""The public surface of the catalog client is pinned: changing it must be a deliberate edit here."""

from __future__ import annotations

from olm.operator_controller import catalogclient


def test_exported_names() -> None:
    assert sorted(catalogclient.__all__) == sorted(
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
    for name in catalogclient.__all__:
        assert getattr(catalogclient, name) is not None


def test_errors_share_one_base() -> None:
    for error in (
        catalogclient.CatalogNotServing,
        catalogclient.CatalogUnreachable,
        catalogclient.MalformedCatalog,
    ):
        assert issubclass(error, catalogclient.CatalogClientError)
