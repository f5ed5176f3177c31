"""TLS profiles: which protocol versions, cipher suites and key-exchange curves a TLS server accepts.

A profile is named and spelled the way upstream OLM v1 spells it (after Mozilla's server-side TLS
guidelines, with Go's names for suites and curves), so one setting means the same in both:

    options = WebhookOptions(tls_profile=tlsprofile.MODERN)
    options = WebhookOptions(tls_profile=tlsprofile.Profile(
        name="Custom", minimum_version=ssl.TLSVersion.TLSv1_2,
        ciphers=("TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",), curves=("prime256v1",)))

Every TLS server of the manager takes one (`ServingCertificate.tls_profile`, INTERMEDIATE unless
set), and `apply` puts one on any `ssl.SSLContext` of your own.

What Python's `ssl` module (3.11, on OpenSSL 3) can honour, and so what a `Profile` promises:

- **Minimum version**, TLS 1.0 to 1.3. Below 1.2 the context runs at OpenSSL security level 0:
  OpenSSL 3 refuses the SHA-1 and MD5 handshake signatures TLS 1.0 and 1.1 need at any higher level.
- **Suites for TLS 1.2 and older**: exactly the named ones, preferred in Go's order (Go ignores the
  order of a configured list; so does this). None named means Go's default suites.
- **TLS 1.3 suites** cannot be chosen (Python has no `set_ciphersuites`): the three of TLS 1.3 are
  always offered, as in Go, where they are not configurable either. Naming some but not all of them
  asks for a selection that cannot be made, and is refused. Naming only TLS 1.3 suites leaves TLS 1.2
  without a suite, so TLS 1.3 becomes the minimum: the outcome upstream has too.
- **Curves**: one named curve is honoured exactly (`set_ecdh_curve`); none named means OpenSSL's
  default groups. Python's `ssl` cannot restrict the groups to a list, so a list of two or more is
  refused, and the post-quantum hybrids (X25519MLKEM768, ...) are refused: OpenSSL 3.0 lacks them and
  Python cannot select them by name.

The predefined profiles (OLD, INTERMEDIATE, MODERN) hold upstream's versions and suites, minus the
suites the linked OpenSSL does not implement (3DES on Debian's OpenSSL 3.0), as upstream drops the
entries Go lacks; their curve lists (post-quantum hybrid, X25519, P-256, P-384) cannot be set as a
list, so they use OpenSSL's default groups, which contain those curves (and X448, P-521 and, for
TLS 1.3, the ffdhe groups). A `Profile` that cannot be honoured raises `Unsupported` when made, so a
process refuses it at start; a name Go does not know raises `ValueError` with upstream's message.
"""

from __future__ import annotations

import dataclasses
import functools
import ssl
import warnings

__all__ = [
    "CIPHERS",
    "CURVES",
    "INTERMEDIATE",
    "MODERN",
    "OLD",
    "PREDEFINED",
    "TLS13_CIPHERS",
    "VERSIONS",
    "Profile",
    "Unsupported",
]

TLS13_CIPHERS = ("TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256")
"""The TLS 1.3 suites: always all offered (OpenSSL's names are the IANA ones)."""

# Go's preference order for TLS 1.2 and older (crypto/tls), with OpenSSL's name for each suite: the
# order in which a configured list is preferred, whatever order it was given in.
_TLS12_CIPHERS: dict[str, str] = {
    "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256": "ECDHE-ECDSA-AES128-GCM-SHA256",
    "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256": "ECDHE-RSA-AES128-GCM-SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384": "ECDHE-ECDSA-AES256-GCM-SHA384",
    "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384": "ECDHE-RSA-AES256-GCM-SHA384",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-ECDSA-CHACHA20-POLY1305",
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-RSA-CHACHA20-POLY1305",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA": "ECDHE-ECDSA-AES128-SHA",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA": "ECDHE-RSA-AES128-SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA": "ECDHE-ECDSA-AES256-SHA",
    "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA": "ECDHE-RSA-AES256-SHA",
    "TLS_RSA_WITH_AES_128_GCM_SHA256": "AES128-GCM-SHA256",
    "TLS_RSA_WITH_AES_256_GCM_SHA384": "AES256-GCM-SHA384",
    "TLS_RSA_WITH_AES_128_CBC_SHA": "AES128-SHA",
    "TLS_RSA_WITH_AES_256_CBC_SHA": "AES256-SHA",
    "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA": "ECDHE-RSA-DES-CBC3-SHA",
    "TLS_RSA_WITH_3DES_EDE_CBC_SHA": "DES-CBC3-SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256": "ECDHE-ECDSA-AES128-SHA256",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256": "ECDHE-RSA-AES128-SHA256",
    "TLS_RSA_WITH_AES_128_CBC_SHA256": "AES128-SHA256",
    "TLS_ECDHE_ECDSA_WITH_RC4_128_SHA": "ECDHE-ECDSA-RC4-SHA",
    "TLS_ECDHE_RSA_WITH_RC4_128_SHA": "ECDHE-RSA-RC4-SHA",
    "TLS_RSA_WITH_RC4_128_SHA": "RC4-SHA",
}

CIPHERS = TLS13_CIPHERS + tuple(_TLS12_CIPHERS)
"""Every suite name accepted: Go's `tls.CipherSuites()` and `tls.InsecureCipherSuites()`."""

# Go's default suites for TLS 1.2 and older, the first ten above: ECDHE with AEAD or CBC-SHA; RSA key
# exchange, 3DES, CBC-SHA256 and RC4 only when named.
_GO_DEFAULT_TLS12 = tuple(_TLS12_CIPHERS)[:10]

_POST_QUANTUM = ("X25519MLKEM768", "SecP256r1MLKEM768", "SecP384r1MLKEM1024")
CURVES: dict[str, str | None] = {
    "X25519": "X25519",
    "prime256v1": "prime256v1",
    "secp256r1": "prime256v1",  # the IANA name of prime256v1
    "secp384r1": "secp384r1",
    "secp521r1": "secp521r1",
    **dict.fromkeys(_POST_QUANTUM),
}
"""Every curve name accepted (upstream's spellings), with OpenSSL's name; None for the post-quantum
hybrids, which Python's `ssl` cannot select."""

VERSIONS: dict[str, ssl.TLSVersion] = {
    "TLSv1.0": ssl.TLSVersion.TLSv1,
    "TLSv1.1": ssl.TLSVersion.TLSv1_1,
    "TLSv1.2": ssl.TLSVersion.TLSv1_2,
    "TLSv1.3": ssl.TLSVersion.TLSv1_3,
}
"""The minimum versions, by upstream's names."""


class Unsupported(ValueError):
    """A profile this runtime's TLS library cannot honour; the message says what and why."""


@functools.cache
def _openssl_ciphers() -> frozenset[str]:
    """The TLS 1.2-and-older suites the linked OpenSSL implements (at any security level)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.set_ciphers("ALL:COMPLEMENTOFALL:@SECLEVEL=0")
    return frozenset(c["name"] for c in context.get_ciphers())


def _available(names: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(n for n in names if n in TLS13_CIPHERS or _TLS12_CIPHERS[n] in _openssl_ciphers())


@dataclasses.dataclass(frozen=True, kw_only=True)
class Profile:
    """A TLS server's versions, suites and curves (see the module doc for what is honoured)."""

    name: str = "Custom"
    """How logs and messages name the profile."""
    minimum_version: ssl.TLSVersion = ssl.TLSVersion.TLSv1_2
    """The oldest version accepted."""
    ciphers: tuple[str, ...] = ()
    """Suites by Go's (IANA) names; empty: Go's defaults for TLS 1.2 and older."""
    curves: tuple[str, ...] = ()
    """Key-exchange curves by upstream's names; empty: OpenSSL's default groups."""

    def __post_init__(self) -> None:
        if self.minimum_version not in VERSIONS.values():
            raise ValueError(f"unknown TLS version: {self.minimum_version!r}")
        for cipher in self.ciphers:
            if cipher not in CIPHERS:
                raise ValueError(f'unknown cipher "{cipher}"')
        for curve in self.curves:
            if curve not in CURVES:
                raise ValueError(f'unknown curve "{curve}"')
        self._refuse_what_cannot_be_honoured()

    def _refuse_what_cannot_be_honoured(self) -> None:
        problems: list[str] = []
        missing = [c for c in self.ciphers if c not in _available((c,))]
        if missing:
            problems.append(
                f"cipher {', '.join(missing)} is not implemented by {ssl.OPENSSL_VERSION}, the TLS "
                "library of this runtime"
            )
        tls13 = [c for c in TLS13_CIPHERS if c in self.ciphers]
        if tls13 and len(tls13) != len(TLS13_CIPHERS):
            problems.append(
                "TLS 1.3 cipher suites cannot be selected with Python's ssl module; "
                f"{', '.join(TLS13_CIPHERS)} are always offered, so name all three or none"
            )
        quantum = [c for c in self.curves if CURVES[c] is None]
        if quantum:
            problems.append(
                f"curve {', '.join(quantum)} is a post-quantum hybrid group, which {ssl.OPENSSL_VERSION} "
                "does not implement and Python's ssl module cannot select"
            )
        elif len({CURVES[c] for c in self.curves}) > 1:
            problems.append(
                f"Python's ssl module can restrict key exchange to one curve only, not "
                f"{', '.join(self.curves)}; name one curve, or none for OpenSSL's defaults"
            )
        if problems:
            raise Unsupported(f"TLS profile {self.name}: {'; '.join(problems)}")

    def effective_minimum(self) -> ssl.TLSVersion:
        """`minimum_version`, or TLS 1.3 when the suites named are TLS 1.3 suites only."""
        if self.ciphers and all(c in TLS13_CIPHERS for c in self.ciphers):
            return ssl.TLSVersion.TLSv1_3
        return self.minimum_version

    def openssl_ciphers(self) -> str:
        """The OpenSSL cipher string for TLS 1.2 and older, in Go's preference order."""
        named = self.ciphers or _GO_DEFAULT_TLS12
        ordered = [openssl for iana, openssl in _TLS12_CIPHERS.items() if iana in named]
        if self.effective_minimum() < ssl.TLSVersion.TLSv1_2:
            ordered.append("@SECLEVEL=0")  # TLS 1.0/1.1 handshakes sign with SHA-1/MD5 (module doc)
        return ":".join(ordered)

    def apply(self, context: ssl.SSLContext) -> None:
        """Set the versions, suites and curve of a server context."""
        minimum = self.effective_minimum()
        with warnings.catch_warnings():
            # The Old profile and TLSv1.0/1.1 custom ones ask for the versions Python deprecates.
            warnings.simplefilter("ignore", DeprecationWarning)
            context.minimum_version = minimum
        if minimum < ssl.TLSVersion.TLSv1_3:
            context.set_ciphers(self.openssl_ciphers())
        if self.curves:
            curve = CURVES[self.curves[0]]
            assert curve is not None  # post-quantum names were refused when the profile was made
            context.set_ecdh_curve(curve)


_INTERMEDIATE_CIPHERS = (
    *TLS13_CIPHERS,
    "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
    "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
    "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
)
_OLD_CIPHERS = (
    *_INTERMEDIATE_CIPHERS,
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA",
    "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA",
    "TLS_RSA_WITH_AES_128_GCM_SHA256",
    "TLS_RSA_WITH_AES_256_GCM_SHA384",
    "TLS_RSA_WITH_AES_128_CBC_SHA256",
    "TLS_RSA_WITH_AES_128_CBC_SHA",
    "TLS_RSA_WITH_AES_256_CBC_SHA",
    "TLS_RSA_WITH_3DES_EDE_CBC_SHA",
)

MODERN = Profile(name="Modern", minimum_version=ssl.TLSVersion.TLSv1_3, ciphers=TLS13_CIPHERS)
"""TLS 1.3 only."""
INTERMEDIATE = Profile(
    name="Intermediate", minimum_version=ssl.TLSVersion.TLSv1_2, ciphers=_INTERMEDIATE_CIPHERS
)
"""TLS 1.2 with ECDHE and AEAD suites, and TLS 1.3: upstream's default, and the runtime's."""
OLD = Profile(name="Old", minimum_version=ssl.TLSVersion.TLSv1, ciphers=_available(_OLD_CIPHERS))
"""TLS 1.0 and newer with CBC and RSA key-exchange suites, for clients that have nothing better."""

PREDEFINED: dict[str, Profile] = {p.name: p for p in (OLD, INTERMEDIATE, MODERN)}
"""The predefined profiles by name."""
