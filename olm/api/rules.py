"""CEL rules and the regular expressions behind them.

The regular expressions are plain RE2 (no look-around, no back-references), so Python's `re` and
the API server's CEL `matches()` agree on them; the unit tests exercise them with `re` and the
e2e tests against a real API server. CEL `matches()` searches rather than matches, so every
expression that must cover the whole value is anchored with `^...$`.
"""

from __future__ import annotations

from olm.api.markers import Rule

__all__ = [
    "DIGEST_ALGORITHM",
    "DNS1123_LABEL",
    "DNS1123_SUBDOMAIN",
    "FIELD_PATH",
    "IMAGE_DOMAIN",
    "IMAGE_PATH",
    "IMAGE_REF_RULES",
    "NO_POLLING_A_DIGEST",
    "RESOLVED_IMAGE_REF_RULES",
    "SEMVER",
    "VERSION_RANGE",
    "dns1123_label",
    "dns1123_subdomain",
    "immutable",
    "matches",
]

DNS1123_LABEL = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
DNS1123_SUBDOMAIN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
FIELD_PATH = r"^[a-zA-Z0-9]+(\.[a-zA-Z0-9]+)*$"
SEMVER = (
    r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)"
    r"(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$"
)

# Version ranges, as the version-ranges document describes them: a comparison is an optional
# operator followed by a version of one to three dot-separated parts, each a number without
# leading zeros or a wildcard (x, X, *), with optional pre-release and build suffixes;
# comparisons are joined by spaces or commas (AND) and by "||" (OR). Hyphen ranges and "&&" are
# not part of the syntax.
_OPERATOR = r"(=|!=|>|<|>=|=>|<=|=<|~|~>|\^)?"
_PART = r"(0|[1-9][0-9]*|x|X|\*)"
_IDENTIFIERS = r"[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*"
_VERSION = rf"v?{_PART}(\.{_PART}){{0,2}}(-{_IDENTIFIERS})?(\+{_IDENTIFIERS})?"
_COMPARISON = rf"{_OPERATOR}\s*{_VERSION}"
_JOIN = r"(\s*\|\|\s*|\s*,\s*|\s+)"
VERSION_RANGE = rf"^\s*{_COMPARISON}({_JOIN}{_COMPARISON})*\s*$"

# Image references: <domain>/<path>[:<tag>][@<algorithm>:<hex>], the grammar OCI registries and
# container runtimes share (the domain may carry a port).
_DOMAIN_LABEL = r"[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?"
IMAGE_DOMAIN = rf"{_DOMAIN_LABEL}(\.{_DOMAIN_LABEL})*(:[0-9]+)?"
_PATH_COMPONENT = r"[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*"
IMAGE_PATH = rf"{_PATH_COMPONENT}(/{_PATH_COMPONENT})*"
DIGEST_ALGORITHM = r"[A-Za-z][A-Za-z0-9]*([-_+.][A-Za-z][A-Za-z0-9]*)*"
_TAG = r"[A-Za-z0-9_][A-Za-z0-9_.-]*"
_TAG_MAX = 128


def matches(pattern: str, message: str) -> Rule:
    """`self` must match `pattern` (a raw CEL string, so backslashes need no doubling)."""
    return Rule(f"self.matches(r'{pattern}')", message)


def immutable(field: str) -> Rule:
    """A transition rule: once stored, the value may not change."""
    return Rule("self == oldSelf", f"{field} is immutable")


def dns1123_label(field: str) -> Rule:
    return matches(
        DNS1123_LABEL,
        f"{field} must be a valid DNS-1123 label: lowercase letters, digits and '-', "
        "starting and ending with a letter or digit, at most 63 characters",
    )


def dns1123_subdomain(field: str) -> Rule:
    return matches(
        DNS1123_SUBDOMAIN,
        f"{field} must be a valid DNS-1123 subdomain: lowercase letters, digits, '-' and '.', "
        "each dot-separated part starting and ending with a letter or digit, at most 253 characters",
    )


_HAS_DIGEST = "self.contains('@')"
_TAG_SUFFIX = "self.find(r':[^/]*$')"  # the text after the last ':' that has no '/' after it

_DOMAIN_RULE = Rule(
    f"self.matches(r'^{IMAGE_DOMAIN}/')",
    "ref must start with a registry domain and '/', such as quay.io/ or localhost:5000/; "
    "domain parts are letters, digits and '-', separated by '.', with an optional :port",
)
_PATH_RULE = Rule(
    f"self.matches(r'^{IMAGE_DOMAIN}/{IMAGE_PATH}([:@][^/]*)?$')",
    "ref must name a repository after the domain: lowercase letters and digits, in "
    "components separated by '/', with '.', '_', '__' or '-' only between letters and digits",
)
_DIGEST_RULES = (
    Rule(
        f"!{_HAS_DIGEST} || self.matches(r'^[^@]+@{DIGEST_ALGORITHM}:[^@:]*$')",
        "digest algorithm is invalid: it must start with a letter and contain only letters, "
        "digits and the separators '-', '_', '+' and '.', as in sha256",
    ),
    Rule(
        f"!{_HAS_DIGEST} || self.matches(r'@[^@]*:[0-9a-fA-F]{{32,}}$')",
        "digest is invalid: after the algorithm and ':' it must have at least 32 hexadecimal "
        "characters (0-9, a-f, A-F)",
    ),
)

IMAGE_REF_RULES = (
    _DOMAIN_RULE,
    _PATH_RULE,
    Rule(
        f"{_HAS_DIGEST} || self.matches(r':[^/]+$')",
        "ref must end with a tag (such as :latest) or a digest (such as @sha256:<hex>)",
    ),
    Rule(
        f"{_HAS_DIGEST} || {_TAG_SUFFIX} == '' || {_TAG_SUFFIX}.matches(r'^:{_TAG}$')",
        "tag is invalid: it must start with a letter, digit or '_' and contain only letters, "
        "digits, '_', '.' and '-'",
    ),
    Rule(
        f"{_HAS_DIGEST} || {_TAG_SUFFIX}.size() <= {_TAG_MAX + 1}",
        f"tag is invalid: it must not be longer than {_TAG_MAX} characters",
    ),
    *_DIGEST_RULES,
)
"""An image reference ending in a tag or a digest."""

RESOLVED_IMAGE_REF_RULES = (
    _DOMAIN_RULE,
    _PATH_RULE,
    Rule(_HAS_DIGEST, "ref must be a digest reference, ending in @<algorithm>:<hex>"),
    *_DIGEST_RULES,
)
"""An image reference pinned by digest."""


NO_POLLING_A_DIGEST = Rule(
    "!(self.ref.contains('@') && has(self.pollIntervalMinutes))",
    "pollIntervalMinutes must not be set when ref is a digest reference: "
    "the content of a digest never changes, so there is nothing to poll for",
)
"""On an image source with `ref` and `pollIntervalMinutes` (a ClusterCatalog's, a bundle's)."""
