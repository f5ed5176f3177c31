"""What can go wrong reading a catalog, one type per decision the caller makes."""

from __future__ import annotations

__all__ = ["CatalogClientError", "CatalogNotServing", "CatalogUnreachable", "MalformedCatalog"]


class CatalogClientError(Exception):
    """A catalog's content could not be read; `catalog` names the ClusterCatalog."""

    def __init__(self, catalog: str, message: str) -> None:
        super().__init__(message)
        self.catalog = catalog
        self.message = message


class CatalogNotServing(CatalogClientError):
    """The catalog is not serving content (not `Serving`, no URL or digest yet, or a 404).

    Expected while a catalog unpacks or after it was deleted: resolve with the serving catalogs and
    name this one as skipped.
    """

    def __init__(self, catalog: str, detail: str = "") -> None:
        text = f"catalog {catalog!r} is not being served"
        super().__init__(catalog, f"{text}: {detail}" if detail else text)


class CatalogUnreachable(CatalogClientError):
    """The content server could not be reached or failed (connection, TLS, timeout, 5xx); retried."""


class MalformedCatalog(CatalogClientError):
    """The server answered with content that is not a valid catalog; retrying will not help."""

    def __init__(self, catalog: str, detail: str) -> None:
        super().__init__(catalog, f"catalog {catalog!r} served malformed content: {detail}")
