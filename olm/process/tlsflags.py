"""`--tls-profile` and `--tls-custom-*`: upstream's TLS flags, for every TLS server of a process.

    --tls-profile=Intermediate                      (the default; also Old, Modern, Custom)
    --tls-profile=Custom --tls-custom-version=TLSv1.2 \\
        --tls-custom-ciphers=TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 \\
        --tls-custom-curves=prime256v1

Spelled and refused as upstream spells and refuses them: a profile name in any case
(`unknown TLS profile: "x"`), a version `TLSv1.0` to `TLSv1.3` (`unknown TLS version: "x"`), suites
by Go's names and curves by upstream's names as comma-separated lists (`unknown cipher "x"`,
`unknown curve "x"`); the `--tls-custom-*` flags count only with `--tls-profile=Custom`. What the
Python runtime cannot honour (`olm_runtime.manager.tlsprofile`: a selection of TLS 1.3 suites, more
than one curve, post-quantum groups, suites the linked OpenSSL lacks) is refused when the flags are
read, before anything starts.
"""

from __future__ import annotations

import argparse
import csv

from olm_runtime.manager import tlsprofile

__all__ = ["CUSTOM", "add_flags", "profile_from"]

CUSTOM = "Custom"
_PROFILES = {name.lower(): name for name in (*tlsprofile.PREDEFINED, CUSTOM)}


def _profile_name(text: str) -> str:
    try:
        return _PROFILES[text.lower()]
    except KeyError:
        raise argparse.ArgumentTypeError(f'unknown TLS profile: "{text}"') from None


def _version(text: str) -> str:
    if text not in tlsprofile.VERSIONS:
        raise argparse.ArgumentTypeError(f'unknown TLS version: "{text}"')
    return text


def _list(text: str) -> list[str]:
    # One CSV record, as upstream reads the flag (so a quoted name may hold a comma).
    return next(csv.reader([text])) if text else []


def _ciphers(text: str) -> tuple[str, ...]:
    for name in _list(text):
        if name not in tlsprofile.CIPHERS:
            raise argparse.ArgumentTypeError(f'unknown cipher "{name}"')
    return tuple(_list(text))


def _curves(text: str) -> tuple[str, ...]:
    for name in _list(text):
        if name not in tlsprofile.CURVES:
            raise argparse.ArgumentTypeError(f'unknown curve "{name}"')
    return tuple(_list(text))


def add_flags(parser: argparse.ArgumentParser) -> None:
    """The four flags; `profile_from(args)` makes the profile they describe."""
    parser.add_argument(
        "--tls-profile",
        type=_profile_name,
        default=tlsprofile.INTERMEDIATE.name,
        help="TLS profile of every TLS server of the process (metrics; catalogd's content and webhook "
        "servers too): one of "
        f"{', '.join(_PROFILES.values())} (any case); see docs/compat/flags.md",
    )
    parser.add_argument(
        "--tls-custom-version",
        type=_version,
        default="TLSv1.2",
        help=f"oldest TLS version of the Custom profile: one of {', '.join(tlsprofile.VERSIONS)}",
    )
    parser.add_argument(
        "--tls-custom-ciphers",
        type=_ciphers,
        default=(),
        help="cipher suites of the Custom profile, by Go's names, comma-separated (TLS 1.3 suites: "
        "all three or none)",
    )
    parser.add_argument(
        "--tls-custom-curves",
        type=_curves,
        default=(),
        help=f"curve of the Custom profile: one of {', '.join(c for c, o in tlsprofile.CURVES.items() if o)} "
        "(one only; none: OpenSSL's defaults)",
    )


def profile_from(args: argparse.Namespace) -> tlsprofile.Profile:
    """The profile the flags describe; `tlsprofile.Unsupported` when it cannot be honoured."""
    if args.tls_profile != CUSTOM:
        return tlsprofile.PREDEFINED[args.tls_profile]
    return tlsprofile.Profile(
        name=CUSTOM,
        minimum_version=tlsprofile.VERSIONS[args.tls_custom_version],
        ciphers=args.tls_custom_ciphers,
        curves=args.tls_custom_curves,
    )
