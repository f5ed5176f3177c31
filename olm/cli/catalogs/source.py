"""Where catalogd's content is, as seen from the user's machine: the trust for the URL each
ClusterCatalog advertises, and the Service behind it for the API server's proxy (`content` reads
through both)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from olm.api import names

if TYPE_CHECKING:
    from olm.pipeline.catalogs import CatalogRef
    from olm_runtime.client.transport import Requester

__all__ = ["CATALOGD_SERVICE", "ContentSource", "proxy_path"]

CATALOGD_SERVICE = "catalogd-service"
"""The Service in front of catalogd's content server, as `manifests/catalogd` names it."""


@dataclass(frozen=True, kw_only=True)
class ContentSource:
    """How to reach catalogd: the trust for its URL and where its Service lives for the proxy."""

    requester: Requester
    """The API server transport, used for the service-proxy fallback."""
    ca_file: Path | None = None
    """CA bundle for catalogd's certificate on the direct URL; None uses the system trust store."""
    system_namespace: str = names.DEFAULT_SYSTEM_NAMESPACE
    service: str = CATALOGD_SERVICE


def proxy_path(source: ContentSource, ref: CatalogRef) -> str:
    """The API server path that proxies `<base>/api/v1/all` to catalogd's Service."""
    content_path = urlsplit(ref.base_url).path.rstrip("/")
    return (
        f"/api/v1/namespaces/{source.system_namespace}/services/https:{source.service}:https/proxy"
        f"{content_path}/api/v1/all"
    )
