"""A ClusterCatalog's whole content, read from wherever the user's machine can reach it.

operator-controller reads one package at a time from inside the cluster; the CLI needs every package
(to count and search them) and runs outside it, where the advertised `status.urls.base` (normally
`https://catalogd-service.<ns>.svc/...`) may not resolve. So `read_catalog` asks that URL for
`<base>/api/v1/all` first and, when no connection can be made (name resolution, refused, connect
timeout), asks the API server's service proxy for the same path on catalogd's Service. A TLS failure
on the direct URL is reported rather than worked around: it means the wrong CA, which `--catalogd-ca`
fixes.

Parsing reuses operator-controller's catalog code (`CatalogRef`, `parse_lines` and its errors) on
metas split by `olm.fbc`, so the CLI sees exactly the typed content the resolver sees: a package
with a malformed object is left out and named in `CatalogPackages.malformed` (the resolver skips
the catalog for that package only), while the catalog's other packages read as usual.
"""

from __future__ import annotations

import io
import ssl

import aiohttp

from olm import fbc
from olm.cli.catalogs.source import ContentSource, proxy_path
from olm.pipeline.catalogs import (
    CatalogNotServing,
    CatalogRef,
    CatalogUnreachable,
    ClientOptions,
    MalformedCatalog,
    PackageContent,
    parse_lines,
)
from olm_runtime.client import errors

__all__ = ["CatalogPackages", "parse_catalog", "read_catalog"]

_LIMITS = ClientOptions()
"""operator-controller's client timeouts: big catalogs are 100+ MB, a dead address should fail fast."""


class CatalogPackages(dict[str, PackageContent]):
    """The readable packages of one catalog version, by name."""

    def __init__(self, packages: dict[str, PackageContent], malformed: dict[str, MalformedCatalog]) -> None:
        super().__init__(packages)
        self.malformed = malformed
        """Package name -> why its content could not be read."""


async def read_catalog(source: ContentSource, ref: CatalogRef) -> CatalogPackages:
    """Every package of the catalog version `ref`, by name.

    Raises `CatalogNotServing`, `CatalogUnreachable` or `MalformedCatalog` (operator-controller's
    catalog errors), or `errors.TransportError` when the API server itself cannot be reached.
    """
    try:
        body = await _direct(source, ref)
    except _NoConnection as direct:
        body = await _proxied(source, ref, direct.cause)
    return parse_catalog(ref.name, body)


def parse_catalog(catalog: str, body: bytes) -> CatalogPackages:
    """Split a served catalog (JSON lines) into packages and parse each as the resolver does.

    Raises `MalformedCatalog` when the body is not a stream of objects at all.
    """
    lines: dict[str, list[bytes]] = {}
    try:
        for meta in fbc.iter_stream(io.BytesIO(body), f"catalog {catalog}"):
            owner = meta.name if meta.schema == fbc.SCHEMA_PACKAGE else meta.package
            if owner:
                lines.setdefault(owner, []).append(meta.blob)
    except fbc.ParseError as err:
        raise MalformedCatalog(catalog, str(err)) from None
    packages: dict[str, PackageContent] = {}
    malformed: dict[str, MalformedCatalog] = {}
    for package in sorted(lines):
        try:
            packages[package] = parse_lines(catalog, package, lines[package])
        except MalformedCatalog as err:
            malformed[package] = err
    return CatalogPackages(packages, malformed)


class _NoConnection(Exception):
    def __init__(self, cause: str) -> None:
        super().__init__(cause)
        self.cause = cause


async def _direct(source: ContentSource, ref: CatalogRef) -> bytes:
    url = ref.base_url.rstrip("/") + "/api/v1/all"
    context = ssl.create_default_context(cafile=str(source.ca_file) if source.ca_file else None)
    timeout = aiohttp.ClientTimeout(
        total=_LIMITS.total_timeout, sock_connect=_LIMITS.connect_timeout, sock_read=_LIMITS.read_timeout
    )
    try:
        async with (
            aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=context)) as session,
            session.get(url, timeout=timeout) as response,
        ):
            if response.status == 404:
                raise CatalogNotServing(ref.name, f"{url} answered 404")
            if response.status != 200:
                raise CatalogUnreachable(
                    ref.name, f"catalog {ref.name!r}: {url} answered HTTP {response.status}"
                )
            return await response.read()
    except aiohttp.ClientSSLError as err:
        hint = (
            ""
            if source.ca_file
            else "; pass --catalogd-ca FILE with the CA that signed catalogd's certificate"
        )
        raise CatalogUnreachable(
            ref.name, f"catalog {ref.name!r}: TLS with {url} failed: {err}{hint}"
        ) from err
    except (aiohttp.ClientConnectorError, aiohttp.ConnectionTimeoutError) as err:
        raise _NoConnection(f"{url}: {err}") from err
    except (aiohttp.ClientError, TimeoutError) as err:
        raise CatalogUnreachable(ref.name, f"catalog {ref.name!r}: reading {url} failed: {err}") from err


async def _proxied(source: ContentSource, ref: CatalogRef, direct_cause: str) -> bytes:
    path = proxy_path(source, ref)
    try:
        return await source.requester.request(
            "GET", path, headers={"Accept": "application/jsonl, */*"}, timeout=_LIMITS.total_timeout
        )
    except errors.APIError as err:
        raise CatalogUnreachable(
            ref.name,
            f"catalog {ref.name!r}: cannot connect to {direct_cause}, and the API server's proxy to "
            f"service {source.system_namespace}/{source.service} answered {err}",
        ) from err
