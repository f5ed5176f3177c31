"""TLS profiles: upstream's names, what the Python runtime honours, and what it refuses when a
profile is made. Handshakes against real servers: test_tls_profiles.py."""

from __future__ import annotations

import ssl

import pytest

from olm_runtime.manager import tlsprofile


def _context(profile: tlsprofile.Profile) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    profile.apply(context)
    return context


def _tls12_suites(context: ssl.SSLContext) -> list[str]:
    return [c["name"] for c in context.get_ciphers() if c["protocol"] != "TLSv1.3"]


def test_the_predefined_profiles_have_upstreams_minimum_versions() -> None:
    assert {name: p.minimum_version for name, p in tlsprofile.PREDEFINED.items()} == {
        "Old": ssl.TLSVersion.TLSv1,
        "Intermediate": ssl.TLSVersion.TLSv1_2,
        "Modern": ssl.TLSVersion.TLSv1_3,
    }


def test_intermediate_offers_ecdhe_aead_suites_in_gos_order() -> None:
    assert _tls12_suites(_context(tlsprofile.INTERMEDIATE)) == [
        "ECDHE-ECDSA-AES128-GCM-SHA256",
        "ECDHE-RSA-AES128-GCM-SHA256",
        "ECDHE-ECDSA-AES256-GCM-SHA384",
        "ECDHE-RSA-AES256-GCM-SHA384",
        "ECDHE-ECDSA-CHACHA20-POLY1305",
        "ECDHE-RSA-CHACHA20-POLY1305",
    ]


def test_old_drops_the_suites_the_linked_openssl_lacks_as_upstream_drops_what_go_lacks() -> None:
    context = _context(tlsprofile.OLD)
    assert context.minimum_version is ssl.TLSVersion.TLSv1
    suites = _tls12_suites(context)
    assert "ECDHE-ECDSA-AES128-SHA" in suites
    assert "AES128-SHA" in suites
    assert ("DES-CBC3-SHA" in suites) == ("TLS_RSA_WITH_3DES_EDE_CBC_SHA" in tlsprofile.OLD.ciphers)


def test_a_custom_list_is_preferred_in_gos_order_whatever_order_it_was_given_in() -> None:
    profile = tlsprofile.Profile(
        ciphers=("TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384")
    )
    assert _tls12_suites(_context(profile)) == ["ECDHE-RSA-AES256-GCM-SHA384", "ECDHE-RSA-AES128-SHA"]


def test_no_suites_named_means_gos_defaults() -> None:
    suites = _tls12_suites(_context(tlsprofile.Profile()))
    assert len(suites) == 10
    assert "ECDHE-RSA-AES128-SHA" in suites
    assert "AES128-GCM-SHA256" not in suites  # RSA key exchange: only when named, as in Go


def test_only_tls13_suites_named_makes_tls13_the_minimum() -> None:
    profile = tlsprofile.Profile(minimum_version=ssl.TLSVersion.TLSv1_2, ciphers=tlsprofile.TLS13_CIPHERS)
    assert profile.effective_minimum() is ssl.TLSVersion.TLSv1_3
    assert _context(profile).minimum_version is ssl.TLSVersion.TLSv1_3


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        pytest.param({"ciphers": ("TLS_FOO",)}, 'unknown cipher "TLS_FOO"', id="unknown-cipher"),
        pytest.param({"curves": ("P-256",)}, 'unknown curve "P-256"', id="unknown-curve"),
    ],
)
def test_names_go_does_not_know_are_refused_with_upstreams_message(
    fields: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError, match=message) as refused:
        tlsprofile.Profile(**fields)  # type: ignore[arg-type]
    assert not isinstance(refused.value, tlsprofile.Unsupported)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        pytest.param(
            {"ciphers": ("TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384")},
            "TLS 1.3 cipher suites cannot be selected",
            id="tls13-subset",
        ),
        pytest.param(
            {"curves": ("X25519", "prime256v1")},
            "can restrict key exchange to one curve only",
            id="two-curves",
        ),
        pytest.param({"curves": ("X25519MLKEM768",)}, "post-quantum hybrid group", id="post-quantum"),
        pytest.param({"ciphers": ("TLS_RSA_WITH_RC4_128_SHA",)}, "is not implemented by OpenSSL", id="rc4"),
    ],
)
def test_what_the_runtime_cannot_honour_is_refused_when_the_profile_is_made(
    fields: dict[str, object], message: str
) -> None:
    with pytest.raises(tlsprofile.Unsupported, match=message):
        tlsprofile.Profile(**fields)  # type: ignore[arg-type]


def test_one_curve_by_either_of_its_names_is_honoured() -> None:
    assert tlsprofile.Profile(curves=("prime256v1", "secp256r1")).curves == ("prime256v1", "secp256r1")


def test_all_three_tls13_suites_are_accepted() -> None:
    assert tlsprofile.Profile(ciphers=tlsprofile.TLS13_CIPHERS).ciphers == tlsprofile.TLS13_CIPHERS
