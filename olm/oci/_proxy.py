"""What a failed HTTP(S) proxy did, in words that name it.

aiohttp reports a proxy that answers `CONNECT` with an error status as `ClientHttpProxyError` and
one that cannot be connected to as `ClientProxyConnectionError`; neither message says which proxy
it was. Both clients that send requests through proxies (this package's registry client and
operator-controller's catalogd client) describe such failures here, so a status condition says
`proxy http://proxy.corp:3128 refused CONNECT to registry.corp:443: 403 Forbidden` (or
`proxyconnect to proxy http://proxy.corp:3128 failed: Connection refused`) rather than an aiohttp
class name. The proxy is shown without its credentials (`httpproxy.display`).
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit

import aiohttp

from olm.compat import httpproxy


def proxy_failure(error: BaseException, proxy: str | None, url: str) -> str | None:
    """The failure of `proxy`, through which a request to `url` went, that `error` is; None when
    `error` is not the proxy's (no proxy, or a failure past it)."""
    if proxy is None:
        return None
    shown = httpproxy.display(proxy)
    if isinstance(error, aiohttp.ClientHttpProxyError):
        parts = urlsplit(url)
        host = f"[{parts.hostname}]" if ":" in (parts.hostname or "") else parts.hostname
        target = f"{host}:{parts.port or (443 if parts.scheme == 'https' else 80)}"
        return f"proxy {shown} refused CONNECT to {target}: {error.status} {error.message}".rstrip()
    if isinstance(error, aiohttp.ClientProxyConnectionError):
        cause = os.strerror(error.os_error.errno) if error.os_error.errno else type(error.os_error).__name__
        # "proxyconnect", as Go words a failed connection to a proxy (upstream's tests look for it).
        return f"proxyconnect to proxy {shown} failed: {cause}"
    return None


def tls_peer(error: aiohttp.ClientSSLError, proxy: str | None) -> str | None:
    """`proxy <url>` when TLS failed with the (`https://`) proxy rather than the server behind it."""
    if proxy is None:
        return None
    parts = urlsplit(proxy)
    if parts.scheme == "https" and (error.host, error.port) == (parts.hostname, parts.port or 443):
        return f"proxy {httpproxy.display(proxy)}"
    return None
