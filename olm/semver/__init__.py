"""Semantic versions and version ranges, as OLM reads them.

Two range dialects exist because OLM has two sources of ranges:

- `parse_range` reads `spec.source.catalog.version` of a ClusterExtension with the semantics of
  Masterminds/semver v3 (comparisons, `~`, `^`, wildcards, hyphen ranges, `,`/space AND, `||` OR;
  pre-releases only match an OR-group that names a pre-release).
- `parse_skip_range` reads `skipRange` of catalog channel entries with the semantics of
  blang/semver v4, which OLM v0 used and catalogs were written against.

Both return immutable objects with `matches(version)` (also usable as `version in range`).
`Version` orders by semver precedence on top of `semantic_version`; build metadata is kept for
display but never changes equality or ordering. This package is a leaf: it imports nothing from
the rest of `olm`.
"""

from olm.semver._range import Range, RangeError, parse_range
from olm.semver._skiprange import SkipRange, parse_skip_range
from olm.semver._version import Version, VersionError, parse_version

__all__ = [
    "Range",
    "RangeError",
    "SkipRange",
    "Version",
    "VersionError",
    "parse_range",
    "parse_skip_range",
    "parse_version",
]
