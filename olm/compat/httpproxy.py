"""Which HTTP(S) proxy a request goes through, decided from the environment as Go decides it.

Upstream's processes honour `HTTPS_PROXY`, `HTTP_PROXY` and `NO_PROXY` through Go's
`net/http.ProxyFromEnvironment` (`golang.org/x/net/http/httpproxy`). `Proxies` makes the same
decision for a request URL, so a cluster's proxy settings mean the same thing to both:

- the upper-case variable wins over the lower-case one when both are set (Go's standard library);
- `https://` URLs use `HTTPS_PROXY`, `http://` URLs `HTTP_PROXY`; other schemes are never proxied;
- a proxy value without a scheme (`proxy.corp:3128`) means `http://proxy.corp:3128`; a value that
  does not parse as a URL even then is ignored, and requests go direct;
- requests to `localhost` and to loopback IP literals are never proxied;
- `NO_PROXY` is a comma-separated list: `*` (nothing is proxied), an IP address or a CIDR block
  (matched against IP literal hosts only), or a host name, which matches itself and its subdomains
  (`.name` and `*.name` match subdomains only); IP and name entries may carry a `:port`, and then
  match requests to that port only (the scheme's default port counting for URLs without one).

Where this module differs from Go, on purpose:

- a proxy URL whose scheme is not `http` or `https` (Go also dials `socks5`) is refused when the
  variables are read (`UnsupportedProxy`), so a process fails at start rather than at each request;
- under CGI (`REQUEST_METHOD` set) Go fails every `http://` request when `HTTP_PROXY` is set
  (httpoxy); here `HTTP_PROXY` is ignored instead and such requests go direct.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

__all__ = ["Proxies", "UnsupportedProxy", "display"]

_DEFAULT_PORTS = {"http": "80", "https": "443"}
_SUPPORTED_SCHEMES = frozenset({"http", "https"})

_IP = ipaddress.IPv4Address | ipaddress.IPv6Address


class UnsupportedProxy(ValueError):
    """A proxy URL whose scheme this client cannot speak (only `http://` and `https://` proxies)."""


@dataclass(frozen=True, slots=True)
class _Network:
    """A `NO_PROXY` CIDR block: matches IP literal hosts inside it, on any port."""

    network: ipaddress.IPv4Network | ipaddress.IPv6Network

    def matches(self, host: str, port: str, ip: _IP | None) -> bool:
        return ip is not None and ip.version == self.network.version and ip in self.network


@dataclass(frozen=True, slots=True)
class _Address:
    """A `NO_PROXY` IP address, with an optional port."""

    ip: _IP
    port: str

    def matches(self, host: str, port: str, ip: _IP | None) -> bool:
        return ip == self.ip and self.port in ("", port)


@dataclass(frozen=True, slots=True)
class _Domain:
    """A `NO_PROXY` name: `suffix` starts with a dot; `exact` also matches the name itself."""

    suffix: str
    port: str
    exact: bool

    def matches(self, host: str, port: str, ip: _IP | None) -> bool:
        if ip is not None:
            return False
        named = host.endswith(self.suffix) or (self.exact and host == self.suffix[1:])
        return named and self.port in ("", port)


_Rule = _Network | _Address | _Domain


@dataclass(frozen=True, slots=True)
class Proxies:
    """The proxy settings of a process; the default proxies nothing. Build with `from_environ`."""

    http: str | None = None
    """The proxy URL for `http://` requests (`HTTP_PROXY`)."""
    https: str | None = None
    """The proxy URL for `https://` requests (`HTTPS_PROXY`)."""
    bypass: tuple[_Rule, ...] = ()
    """The `NO_PROXY` entries, parsed."""
    bypass_all: bool = False
    """`NO_PROXY` holds `*`."""

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> Proxies:
        """The settings `environ` (normally `os.environ`) holds; raises `UnsupportedProxy`."""

        def variable(name: str) -> str:
            return environ.get(name) or environ.get(name.lower()) or ""

        cgi = bool(environ.get("REQUEST_METHOD"))
        return cls.parse(
            http_proxy="" if cgi else variable("HTTP_PROXY"),
            https_proxy=variable("HTTPS_PROXY"),
            no_proxy=variable("NO_PROXY"),
        )

    @classmethod
    def parse(cls, *, http_proxy: str = "", https_proxy: str = "", no_proxy: str = "") -> Proxies:
        """The settings the three variables' values describe; raises `UnsupportedProxy`."""
        rules: list[_Rule] = []
        for raw in no_proxy.split(","):
            entry = raw.strip().lower()
            if entry == "*":
                return cls(http=_proxy_url(http_proxy), https=_proxy_url(https_proxy), bypass_all=True)
            rule = _rule(entry) if entry else None
            if rule is not None:
                rules.append(rule)
        return cls(http=_proxy_url(http_proxy), https=_proxy_url(https_proxy), bypass=tuple(rules))

    def for_url(self, url: str) -> str | None:
        """The proxy URL a request to `url` goes through, or None to connect directly."""
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        proxy = self.https if scheme == "https" else self.http if scheme == "http" else None
        if proxy is None or self.bypass_all:
            return None
        host = _ascii(parts.hostname or "")
        try:
            port = str(parts.port) if parts.port is not None else _DEFAULT_PORTS[scheme]
        except ValueError:
            return None  # a port that is not a number: the request fails anyway, direct
        if host == "localhost":
            return None
        ip = _ip(host)
        if ip is not None and ip.is_loopback:
            return None
        if any(rule.matches(host, port, ip) for rule in self.bypass):
            return None
        return proxy


def display(proxy: str) -> str:
    """`proxy` without its user information, for messages and logs: `http://host:port`."""
    parts = urlsplit(proxy)
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    try:
        port = f":{parts.port}" if parts.port is not None else ""
    except ValueError:
        port = ""
    return f"{parts.scheme}://{host}{port}"


def _proxy_url(value: str) -> str | None:
    """The proxy URL a variable's value means: None when unset or unparseable (Go ignores those)."""
    if not value:
        return None
    parts = urlsplit(value)
    if not parts.scheme or not parts.netloc:
        value = "http://" + value
        parts = urlsplit(value)
    try:
        parts.port  # noqa: B018 - parsing it is the check: a port that is not a number raises
    except ValueError:
        return None
    if not parts.hostname:
        return None
    if parts.scheme.lower() not in _SUPPORTED_SCHEMES:
        raise UnsupportedProxy(
            f"proxy {display(value)}: the {parts.scheme!r} scheme is not supported (use http:// or https://)"
        )
    return value


def _rule(entry: str) -> _Rule | None:
    """One lower-cased, non-empty `NO_PROXY` entry; None for one Go ignores too."""
    if "/" in entry:
        try:
            return _Network(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            pass  # not a CIDR block: read on as Go does (it then matches no host)
    split = _split_host_port(entry)
    host, port = split if split is not None else (entry, "")
    if not host:
        return None
    ip = None if "%" in host else _ip(host)
    if ip is not None:
        return _Address(ip, port)
    if host.startswith("*."):
        host = host[1:]
    exact = not host.startswith(".")
    return _Domain("." + _ascii(host.removeprefix(".")), port, exact)


def _split_host_port(text: str) -> tuple[str, str] | None:
    """`(host, port)` of `host:port` or `[ipv6]:port` as Go's `net.SplitHostPort` reads it, else None."""
    if text.startswith("["):
        end = text.find("]")
        if end < 0 or text[end + 1 : end + 2] != ":":
            return None
        host, port = text[1:end], text[end + 2 :]
    else:
        host, colon, port = text.rpartition(":")
        if not colon or ":" in host:
            return None
    if any(bracket in host + port for bracket in "[]"):
        return None
    return host, port


def _ip(host: str) -> _IP | None:
    """The IP address `host` is a literal of (IPv4-mapped IPv6 read as IPv4, as Go compares them)."""
    try:
        ip = ipaddress.ip_address(host.partition("%")[0])
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def _ascii(name: str) -> str:
    """An internationalised host name in its ASCII (punycode) form, as requests carry it."""
    if name.isascii():
        return name
    try:
        return name.encode("idna").decode("ascii")
    except UnicodeError:
        return name
