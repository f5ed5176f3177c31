"""The catalog content server under each TLS profile, seen by a real client (`openssl s_client`):
the negotiated version, suite and curve, and the handshakes refused. The same profiles on the
runtime's webhook and metrics servers: unit/runtime/manager/test_tls_profiles.py."""

from __future__ import annotations

import ssl
from pathlib import Path

import pytest

from olm.catalogd.storage import Storage
from olm_runtime.manager import tlsprofile
from unit import tlsclient
from unit.catalogd.serving import serving

TLS13_FIRST = "TLS_AES_256_GCM_SHA384"


@pytest.mark.parametrize(
    ("profile", "client", "expected"),
    [
        pytest.param(tlsprofile.INTERMEDIATE, {}, ("TLSv1.3", TLS13_FIRST, "X25519"), id="intermediate"),
        pytest.param(
            tlsprofile.INTERMEDIATE,
            {"version": "TLSv1.2"},
            ("TLSv1.2", "ECDHE-ECDSA-AES128-GCM-SHA256", "X25519"),
            id="intermediate-1.2",
        ),
        pytest.param(tlsprofile.INTERMEDIATE, {"version": "TLSv1"}, None, id="intermediate-refuses-1.0"),
        pytest.param(tlsprofile.MODERN, {"version": "TLSv1.2"}, None, id="modern-refuses-1.2"),
        pytest.param(
            tlsprofile.OLD,
            {"version": "TLSv1.1"},
            ("TLSv1.1", "ECDHE-ECDSA-AES128-SHA", "X25519"),
            id="old-1.1",
        ),
        pytest.param(
            tlsprofile.Profile(
                minimum_version=ssl.TLSVersion.TLSv1_2,
                ciphers=("TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",),
                curves=("prime256v1",),
            ),
            {"version": "TLSv1.2"},
            ("TLSv1.2", "ECDHE-ECDSA-CHACHA20-POLY1305", "prime256v1"),
            id="custom-chacha-p256",
        ),
    ],
)
async def test_the_content_server_negotiates_what_its_profile_allows(
    tmp_path: Path,
    profile: tlsprofile.Profile,
    client: dict[str, str],
    expected: tuple[str, str, str] | None,
) -> None:
    async with serving(Storage(tmp_path / "s"), tmp_path, tls_profile=profile) as served:
        seen = await tlsclient.handshake(served.server.port, **client)
    if expected is None:
        assert seen.refused, seen.output
    else:
        assert seen.negotiated() == expected, seen.output
