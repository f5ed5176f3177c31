"""The catalogs an extension resolves against: selecting them, reading them, watching them.

The first stage of the install pipeline. `gathering.gather` picks the ClusterCatalogs an
extension's selector names and reads its package from each (`gathering.CatalogContent`, the
resolver's input); `watcher.CatalogWatcher` turns catalog changes into reconciles of the extensions
they concern. Both read catalog content through the client exported here.

The client reads one package of a ClusterCatalog over catalogd's HTTPS content URL. A
ClusterCatalog that is `Serving` names a content URL (`status.urls.base`) and the image digest it
serves (`status.resolvedSource.image.ref`); `CatalogRef.from_cluster_catalog` reads both.
`CatalogClient.get_package(ref, package)` returns that package's `olm.package`, `olm.channel`,
`olm.bundle` and `olm.deprecations` objects as `olm.fbc` typed views (`PackageContent`), which is
all the resolver needs.

Promises:

- Package-scoped: two `metas` queries per package, never the whole catalog, unless the server
  does not support `metas` (404 or 400), in which case `all` is streamed and filtered without
  holding it in memory.
- Cached per (catalog, digest, package): a digest served before is answered from memory with no
  request; a new digest sends the previous ETags in `If-None-Match` and reuses the parsed content on
  304. Memory is bounded (`ClientOptions.cache_max_bytes`, least recently used first); per package only
  the newest digest is kept. Concurrent calls for one key share one fetch.
- Timeouts are sized for 100+ MB catalogs: a short connect timeout, a stall timeout between bytes,
  and a generous total.
- Errors are typed by what the caller does next: `CatalogNotServing` (skip the catalog and say so),
  `CatalogUnreachable` (retry with backoff), `MalformedCatalog` (report; retrying will not help).
  Parsing runs in worker threads, never on the event loop.
"""

from olm.pipeline.catalogs._client import CatalogClient, CatalogRef, ClientOptions, Statistics
from olm.pipeline.catalogs._content import PackageContent, parse_lines
from olm.pipeline.catalogs._errors import (
    CatalogClientError,
    CatalogNotServing,
    CatalogUnreachable,
    MalformedCatalog,
)

__all__ = [
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
