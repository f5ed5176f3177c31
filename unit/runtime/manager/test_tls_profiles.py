"""TLS profiles on the runtime's real servers, seen by a real client (`openssl s_client`): the
negotiated version, suite and curve for each profile, and the handshakes each profile refuses.

The webhook server runs on loopback with a certificate of the test kit's CA (an ECDSA P-256 key, so
the TLS 1.2 suites are the ECDSA ones); the metrics server's contexts (self-signed, or from its
certificate files) are checked the same way. catalogd's content server:
unit/catalogd/test_server_tls_profiles.py."""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from olm_runtime.manager import SecureMetricsOptions, certificates, tlsprofile, webhook
from olm_runtime.testing.pki import CertificateAuthority
from unit import tlsclient

CUSTOM_P384 = tlsprofile.Profile(
    minimum_version=ssl.TLSVersion.TLSv1_2,
    ciphers=("TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",),
    curves=("secp384r1",),
)
CUSTOM_TLS13_P256 = tlsprofile.Profile(minimum_version=ssl.TLSVersion.TLSv1_3, curves=("prime256v1",))
CUSTOM_TLS13_SUITES_ONLY = tlsprofile.Profile(ciphers=tlsprofile.TLS13_CIPHERS)
AES128_GCM = "ECDHE-ECDSA-AES128-GCM-SHA256"
TLS13_FIRST = "TLS_AES_256_GCM_SHA384"  # OpenSSL's first TLS 1.3 suite: preferred by the server

# (profile, what the client offers, what it must negotiate: (version, suite, curve) or None: refused)
CASES = [
    pytest.param(tlsprofile.INTERMEDIATE, {}, ("TLSv1.3", TLS13_FIRST, "X25519"), id="intermediate"),
    pytest.param(
        tlsprofile.INTERMEDIATE,
        {"version": "TLSv1.2"},
        ("TLSv1.2", AES128_GCM, "X25519"),
        id="intermediate-1.2",
    ),
    pytest.param(
        tlsprofile.INTERMEDIATE,
        {"version": "TLSv1.2", "ciphers": "ECDHE-ECDSA-AES128-SHA256"},
        None,
        id="intermediate-refuses-cbc",
    ),
    pytest.param(tlsprofile.INTERMEDIATE, {"version": "TLSv1.1"}, None, id="intermediate-refuses-1.1"),
    # Python's ssl cannot restrict the groups to the profile's list: OpenSSL's defaults (with X448)
    # stay. (On TLS 1.2 an ECDSA P-256 certificate needs the client to offer P-256 anyway.)
    pytest.param(
        tlsprofile.INTERMEDIATE,
        {"version": "TLSv1.3", "groups": "X448"},
        ("TLSv1.3", TLS13_FIRST, "X448"),
        id="intermediate-takes-openssl-default-groups",
    ),
    pytest.param(tlsprofile.MODERN, {}, ("TLSv1.3", TLS13_FIRST, "X25519"), id="modern"),
    pytest.param(tlsprofile.MODERN, {"version": "TLSv1.2"}, None, id="modern-refuses-1.2"),
    pytest.param(
        tlsprofile.OLD, {"version": "TLSv1"}, ("TLSv1", "ECDHE-ECDSA-AES128-SHA", "X25519"), id="old-1.0"
    ),
    pytest.param(
        tlsprofile.OLD,
        {"version": "TLSv1.2", "ciphers": "ECDHE-ECDSA-AES128-SHA256"},
        ("TLSv1.2", "ECDHE-ECDSA-AES128-SHA256", "X25519"),
        id="old-cbc-sha256",
    ),
    pytest.param(
        CUSTOM_P384,
        {"version": "TLSv1.2"},
        ("TLSv1.2", "ECDHE-ECDSA-AES256-GCM-SHA384", "secp384r1"),
        id="custom-one-suite-one-curve",
    ),
    pytest.param(
        CUSTOM_P384,
        {"version": "TLSv1.2", "ciphers": AES128_GCM},
        None,
        id="custom-refuses-unlisted-suite",
    ),
    pytest.param(
        CUSTOM_P384,
        {"version": "TLSv1.3", "groups": "X25519:prime256v1"},
        None,
        id="custom-refuses-unlisted-curve",
    ),
    pytest.param(
        CUSTOM_P384, {"version": "TLSv1.3"}, ("TLSv1.3", TLS13_FIRST, "secp384r1"), id="custom-curve-on-1.3"
    ),
    pytest.param(
        CUSTOM_TLS13_P256, {}, ("TLSv1.3", TLS13_FIRST, "prime256v1"), id="custom-1.3-p256-after-retry"
    ),
    pytest.param(CUSTOM_TLS13_P256, {"version": "TLSv1.2"}, None, id="custom-1.3-refuses-1.2"),
    pytest.param(CUSTOM_TLS13_SUITES_ONLY, {"version": "TLSv1.2"}, None, id="tls13-suites-only-refuse-1.2"),
]


@contextlib.asynccontextmanager
async def webhook_server(tmp_path: Path, profile: tlsprofile.Profile) -> AsyncIterator[int]:
    ca = CertificateAuthority.load_or_create(tmp_path / "ca")
    pair = ca.issue("webhook", common_name="webhook", hosts=["127.0.0.1"])
    server = webhook.WebhookServer(
        webhook.WebhookOptions(
            host="127.0.0.1",
            port=0,
            cert_dir=pair.cert_file.parent,
            cert_name=pair.cert_file.name,
            key_name=pair.key_file.name,
            tls_profile=profile,
        )
    )
    task = asyncio.create_task(server.start())
    try:
        await asyncio.wait_for(server.wait_started(), 10)
        yield server.addresses[0][1]
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


@pytest.mark.parametrize(("profile", "client", "expected"), CASES)
async def test_the_webhook_server_negotiates_what_its_profile_allows(
    tmp_path: Path,
    profile: tlsprofile.Profile,
    client: dict[str, str],
    expected: tuple[str, str, str] | None,
) -> None:
    async with webhook_server(tmp_path, profile) as port:
        seen = await tlsclient.handshake(port, **client)
    if expected is None:
        assert seen.refused, seen.output
    else:
        assert seen.negotiated() == expected, seen.output


@pytest.mark.parametrize(
    ("profile", "client", "expected"),
    [
        pytest.param(tlsprofile.MODERN, {"version": "TLSv1.2"}, None, id="modern-refuses-1.2"),
        pytest.param(tlsprofile.MODERN, {}, ("TLSv1.3", TLS13_FIRST, "X25519"), id="modern"),
        pytest.param(
            CUSTOM_P384,
            {"version": "TLSv1.2"},
            ("TLSv1.2", "ECDHE-ECDSA-AES256-GCM-SHA384", "secp384r1"),
            id="custom-one-suite-one-curve",
        ),
    ],
)
async def test_the_self_signed_metrics_context_negotiates_what_its_profile_allows(
    profile: tlsprofile.Profile, client: dict[str, str], expected: tuple[str, str, str] | None
) -> None:
    context = certificates.self_signed_context(profile)
    server = await asyncio.start_server(lambda _, writer: writer.close(), "127.0.0.1", 0, ssl=context)
    async with server:
        seen = await tlsclient.handshake(server.sockets[0].getsockname()[1], **client)
    if expected is None:
        assert seen.refused, seen.output
    else:
        assert seen.negotiated() == expected, seen.output


async def test_the_metrics_certificate_files_are_served_under_the_profile(tmp_path: Path) -> None:
    """What `_metrics_tls` listens with when `--tls-cert`/`--tls-key` are given."""
    pair = CertificateAuthority.load_or_create(tmp_path / "ca").issue(
        "metrics", common_name="metrics", hosts=["127.0.0.1"]
    )
    options = SecureMetricsOptions(
        cert_dir=pair.cert_file.parent,
        cert_name=pair.cert_file.name,
        key_name=pair.key_file.name,
        tls_profile=CUSTOM_P384,
    )
    watcher = options.watcher()
    watcher.load()
    server = await asyncio.start_server(
        lambda _, writer: writer.close(), "127.0.0.1", 0, ssl=watcher.server_context()
    )
    async with server:
        port = server.sockets[0].getsockname()[1]
        seen = await tlsclient.handshake(port, version="TLSv1.2")
        refused = await tlsclient.handshake(port, version="TLSv1.2", ciphers=AES128_GCM)
    assert seen.negotiated() == ("TLSv1.2", "ECDHE-ECDSA-AES256-GCM-SHA384", "secp384r1"), seen.output
    assert refused.refused, refused.output
