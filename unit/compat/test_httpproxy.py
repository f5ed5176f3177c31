"""The proxy decision follows Go's `httpproxy` semantics: variables, schemes, loopback, NO_PROXY."""

from __future__ import annotations

import pytest

from olm.compat import httpproxy
from olm.compat.httpproxy import Proxies

PROXY = "http://proxy.corp:3128"


@pytest.mark.parametrize(
    ("environ", "url", "expected"),
    [
        pytest.param({}, "https://registry.corp/v2/", None, id="nothing-set-goes-direct"),
        pytest.param({"HTTPS_PROXY": PROXY}, "https://registry.corp/v2/", PROXY, id="https-uses-https-proxy"),
        pytest.param({"HTTPS_PROXY": PROXY}, "http://registry.corp/v2/", None, id="http-ignores-https-proxy"),
        pytest.param({"HTTP_PROXY": PROXY}, "http://registry.corp/", PROXY, id="http-uses-http-proxy"),
        pytest.param({"HTTP_PROXY": PROXY}, "https://registry.corp/", None, id="https-ignores-http-proxy"),
        pytest.param({"https_proxy": PROXY}, "https://registry.corp/", PROXY, id="lower-case-honoured"),
        pytest.param(
            {"HTTPS_PROXY": PROXY, "https_proxy": "http://other:1"},
            "https://registry.corp/",
            PROXY,
            id="upper-case-wins",
        ),
        pytest.param(
            {"HTTPS_PROXY": "", "https_proxy": PROXY},
            "https://registry.corp/",
            PROXY,
            id="empty-upper-skipped",
        ),
        pytest.param(
            {"HTTPS_PROXY": "proxy.corp:3128"}, "https://registry.corp/", PROXY, id="no-scheme-means-http"
        ),
        pytest.param({"HTTPS_PROXY": "proxy.corp"}, "https://r.corp/", "http://proxy.corp", id="bare-host"),
        pytest.param(
            {"HTTPS_PROXY": "https://user:pw@proxy.corp:443"},
            "https://registry.corp/",
            "https://user:pw@proxy.corp:443",
            id="https-proxy-with-credentials",
        ),
        pytest.param(
            {"HTTPS_PROXY": "http://proxy.corp:port"}, "https://r.corp/", None, id="bad-port-ignored"
        ),
        pytest.param({"HTTPS_PROXY": PROXY}, "ftp://files.corp/", None, id="other-schemes-direct"),
        pytest.param({"HTTPS_PROXY": PROXY}, "https://localhost:5000/", None, id="localhost-never"),
        pytest.param({"HTTPS_PROXY": PROXY}, "https://127.0.0.1:5000/", None, id="loopback-v4-never"),
        pytest.param({"HTTPS_PROXY": PROXY}, "https://127.9.9.9/", None, id="whole-loopback-block"),
        pytest.param({"HTTPS_PROXY": PROXY}, "https://[::1]:5000/", None, id="loopback-v6-never"),
        pytest.param({"HTTPS_PROXY": PROXY}, "https://[::ffff:127.0.0.1]/", None, id="mapped-loopback-never"),
        pytest.param({"HTTPS_PROXY": PROXY}, "https://localhost.corp/", PROXY, id="only-the-name-localhost"),
        pytest.param(
            {"HTTP_PROXY": PROXY, "REQUEST_METHOD": "GET"},
            "http://registry.corp/",
            None,
            id="cgi-ignores-http",
        ),
        pytest.param(
            {"HTTPS_PROXY": PROXY, "REQUEST_METHOD": "GET"},
            "https://registry.corp/",
            PROXY,
            id="cgi-keeps-https",
        ),
    ],
)
def test_which_proxy_a_url_uses(environ: dict[str, str], url: str, expected: str | None) -> None:
    assert Proxies.from_environ(environ).for_url(url) == expected


@pytest.mark.parametrize(
    ("no_proxy", "url", "bypassed"),
    [
        pytest.param("*", "https://anything.example.org/", True, id="star-bypasses-all"),
        pytest.param("a.corp, *", "https://b.corp/", True, id="star-among-others"),
        pytest.param("corp.example", "https://corp.example/", True, id="name-matches-itself"),
        pytest.param("corp.example", "https://reg.corp.example/", True, id="name-matches-subdomain"),
        pytest.param("corp.example", "https://notcorp.example/", False, id="name-is-not-a-suffix-string"),
        pytest.param(".corp.example", "https://corp.example/", False, id="dot-excludes-itself"),
        pytest.param(".corp.example", "https://reg.corp.example/", True, id="dot-matches-subdomain"),
        pytest.param("*.corp.example", "https://corp.example/", False, id="star-dot-excludes-itself"),
        pytest.param("*.corp.example", "https://a.b.corp.example/", True, id="star-dot-matches-deep"),
        pytest.param(" Corp.Example ", "https://REG.corp.example/", True, id="case-and-space-insensitive"),
        pytest.param("corp.example:8443", "https://reg.corp.example:8443/", True, id="name-port-matches"),
        pytest.param("corp.example:8443", "https://reg.corp.example/", False, id="name-port-differs"),
        pytest.param("corp.example:443", "https://reg.corp.example/", True, id="default-port-counts"),
        pytest.param("10.1.2.3", "https://10.1.2.3:5000/", True, id="ip-any-port"),
        pytest.param("10.1.2.3:5000", "https://10.1.2.3:5000/", True, id="ip-port-matches"),
        pytest.param("10.1.2.3:5000", "https://10.1.2.3:6000/", False, id="ip-port-differs"),
        pytest.param("10.1.2.4", "https://10.1.2.3/", False, id="other-ip"),
        pytest.param("10.0.0.0/8", "https://10.200.0.1/", True, id="cidr-contains"),
        pytest.param("10.0.0.0/8", "https://11.0.0.1/", False, id="cidr-excludes"),
        pytest.param("10.0.0.0/8", "https://ten.corp/", False, id="cidr-never-matches-names"),
        pytest.param("fd00::/8", "https://[fd00::5]/", True, id="cidr-v6"),
        pytest.param("fd00::5", "https://[fd00::5]:5000/", True, id="ip-v6"),
        pytest.param("[fd00::5]:5000", "https://[fd00::5]:5000/", True, id="ip-v6-port"),
        pytest.param("[fd00::5]:5000", "https://[fd00::5]:6000/", False, id="ip-v6-port-differs"),
        pytest.param("10.1.2.3", "https://10-1-2-3.corp/", False, id="ip-never-matches-names"),
        pytest.param("corp.example", "https://10.1.2.3/", False, id="names-never-match-ips"),
        pytest.param("10.0.0.0/33", "https://10.0.0.1/", False, id="bad-cidr-matches-nothing"),
        pytest.param(",, ,:80", "https://reg.corp/", False, id="empty-entries-ignored"),
        pytest.param("bücher.example", "https://xn--bcher-kva.example/", True, id="idna-entry"),
        pytest.param("xn--bcher-kva.example", "https://bücher.example/", True, id="idna-host"),
    ],
)
def test_no_proxy(no_proxy: str, url: str, *, bypassed: bool) -> None:
    proxies = Proxies.from_environ({"HTTPS_PROXY": PROXY, "NO_PROXY": no_proxy})
    assert proxies.for_url(url) == (None if bypassed else PROXY)


def test_lower_case_no_proxy_is_read() -> None:
    assert Proxies.from_environ({"HTTPS_PROXY": PROXY, "no_proxy": "corp"}).for_url("https://r.corp/") is None


def test_the_default_proxies_nothing() -> None:
    assert Proxies().for_url("https://registry.corp/") is None


@pytest.mark.parametrize("value", ["socks5://proxy.corp:1080", "socks5h://proxy.corp:1080"])
def test_unsupported_proxy_schemes_are_refused_when_read(value: str) -> None:
    with pytest.raises(
        httpproxy.UnsupportedProxy, match=r"proxy socks5h?://proxy\.corp:1080: the 'socks5h?'"
    ):
        Proxies.from_environ({"HTTPS_PROXY": value})


@pytest.mark.parametrize(
    ("proxy", "shown"),
    [
        pytest.param(
            "http://user:secret@proxy.corp:3128", "http://proxy.corp:3128", id="credentials-dropped"
        ),
        pytest.param("https://[fd00::1]:443/", "https://[fd00::1]:443", id="ipv6"),
        pytest.param("http://proxy.corp", "http://proxy.corp", id="no-port"),
    ],
)
def test_display_never_shows_credentials(proxy: str, shown: str) -> None:
    assert httpproxy.display(proxy) == shown
