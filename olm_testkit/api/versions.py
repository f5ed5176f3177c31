"""Version strings for `spec.source.catalog.version`, accepted and rejected.

`DOCUMENTED` is every version string the OLM v1 docs (spec/olmv1-docs.md) show: the comparisons and
their equivalents in the "version ranges" section, and the values of the how-to pages. The unit
tests check them against the regular expression; the e2e tests against the API server.
"""

from __future__ import annotations

__all__ = ["DOCUMENTED", "INVALID", "TOO_LONG", "VALID"]

DOCUMENTED = (
    # version-ranges: range comparisons
    ">=3.0, <3.6",
    # version-ranges: wildcards, and their equivalents
    "1.2.x",
    ">= 1.2.0, < 1.3.0",
    ">= 1.2.x",
    ">= 1.2.0",
    "<= 2.x",
    "< 3",
    "*",
    ">= 0.0.0",
    # version-ranges: tilde comparisons, and their equivalents
    "~1.2.3",
    ">= 1.2.3, < 1.3.0",
    "~1",
    ">= 1, <2",
    "~2.3",
    ">= 2.3, < 2.4",
    "~1.2.x",
    "~1.x",
    ">= 1, < 2",
    # version-ranges: caret comparisons, and their equivalents
    "^1.2.3",
    ">= 1.2.3, < 2.0.0",
    "^1.2.x",
    ">= 1.2.0, < 2.0.0",
    "^2.3",
    ">= 2.3, < 3",
    "^2.x",
    ">= 2.0.0, < 3",
    "^0.2.3",
    ">=0.2.3 <0.3.0",
    "^0.2",
    ">=0.2.0 <0.3.0",
    "^0.0.3",
    ">=0.0.3 <0.0.4",
    "^0.0",
    ">=0.0.0 <0.1.0",
    "^0",
    ">=0.0.0 <1.0.0",
    # how-to pages and the ClusterExtension API page
    "0.6.0",
    "0.5.0",
    "~2.3",
    "1.11.1",
    ">1.11.1",
    "!=1.3.2",
)

VALID = tuple(
    dict.fromkeys(
        (
            *DOCUMENTED,
            "1.2.3",
            "v1.2.3",
            ">=v1.2.3",
            ">= v1.2.3",
            "=1.2.3",
            "=>1.2.3",
            "=<1.2.3",
            "<1.2.3",
            "~>1.2.3",
            "1.X",
            "1.*",
            "1.2.X",
            "1.2.*",
            "x",
            "X",
            "1.2.3-alpha.1+metadata",
            "1.2.3-alpha-beta",
            ">=1.2.3,<2.3.4",
            "<1.2.3||>2.3.4",
            "<1.2.3 || >2.3.4",
            ">1.0.0,<1.2.3 || >2.1.0",
            "<1.2.3-abc+def >2.3.4-ghi+jkl",
            ">=1.2.3, <2.0.0 || >3.0.0",
            "^0 || ^3 || ^5",
            "1234567890.1234567890.123456789012345678901234567890123456789012",  # exactly 64
        )
    )
)
"""Accepted: the documented strings (once each) and the operators and forms the grammar allows."""

TOO_LONG = "1234567890.1234567890.1234567890123456789012345678901234567890123"
"""Well-formed but 65 characters: one over the limit."""

INVALID = (
    "1.2.3 - 2.3.4",  # hyphen ranges are not part of the syntax
    ">1.2.3 && <2.3.4",
    "==1.0",
    "01.2.3",
    "1.02.3",
    "1.2.03",
    "1.2.3.4",
    "1.2.3.alpha",
    "1..2.3",
    ".1.2.3",
    "1.2.-3",
    "1.2.3-beta!",
    "1.2.3-pre+bad_metadata",
    "<<1.2.3",
    ">>1.2.3",
    ">~1.2.3",
    "=!1.2.3",
    # The channel how-to writes "!1.3.2" for "not 1.3.2"; the operator is "!=".
    "!1.3.2",
    "1.Y",
    ">1.2.3;<2.3.4",
    "invalid-semver",
    "",
    "1.2.3,",
)
