"""`signedIdentity`: which image a signature may claim to be signed for, given the image pulled.

A signature names an image (`docker-reference` in a cosign payload); the policy's `signedIdentity`
says how that name must relate to the reference being pulled (the "intended" one), as
containers-policy.json(5) defines it:

- `matchRepoDigestOrExact` (the default): the same repository when the intended reference names a
  digest (the digest itself is checked against the signed manifest digest separately), otherwise
  exactly the same reference, tag included;
- `matchRepository`: the same repository, whatever tag or digest either names;
- `matchExact`: exactly the same reference; a name without tag or digest never matches;
- `exactReference` / `exactRepository`: the signature names this one reference / repository,
  whatever is pulled (an image signed under another name, then copied);
- `remapIdentity`: when the intended repository starts with `prefix` (a whole path component),
  that prefix is replaced by `signedPrefix` and the result compared as `matchRepoDigestOrExact`
  (a mirror whose images keep the identity of the original).

References are compared in their fully expanded form (`busybox` is `docker.io/library/busybox`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from olm.oci._errors import InvalidReference, InvalidSignaturePolicy
from olm.oci._reference import Reference

__all__ = [
    "ExactReference",
    "ExactRepository",
    "IdentityRule",
    "MatchExact",
    "MatchRepoDigestOrExact",
    "MatchRepository",
    "RemapIdentity",
    "parse_named",
    "parse_rule",
]


class PolicyFormatError(InvalidSignaturePolicy):
    """A policy document that does not follow containers-policy.json(5); the message says where."""


def parse_named(text: str) -> Reference:
    """`text` as a reference that keeps "no tag and no digest" (a bare repository) as written,
    instead of defaulting to `:latest` as pulling does."""
    reference = Reference.parse(text)
    without_digest = text.partition("@")[0]
    written_tag = without_digest.rfind(":") > without_digest.rfind("/")
    if reference.digest is None and not written_tag:
        return dataclasses.replace(reference, tag=None)
    return reference


def _is_name_only(reference: Reference) -> bool:
    return reference.tag is None and reference.digest is None


def _exact(intended: Reference, signed: Reference) -> bool:
    if _is_name_only(intended) or _is_name_only(signed):
        return False
    return str(intended) == str(signed)


def _repo_digest_or_exact(intended: Reference, signed: Reference) -> bool:
    if intended.digest is not None:
        return intended.name == signed.name
    return _exact(intended, signed)


@dataclass(frozen=True, slots=True)
class MatchRepoDigestOrExact:
    name = "matchRepoDigestOrExact"

    def matches(self, intended: Reference, signed: Reference) -> bool:
        return _repo_digest_or_exact(intended, signed)


@dataclass(frozen=True, slots=True)
class MatchRepository:
    name = "matchRepository"

    def matches(self, intended: Reference, signed: Reference) -> bool:
        return intended.name == signed.name


@dataclass(frozen=True, slots=True)
class MatchExact:
    name = "matchExact"

    def matches(self, intended: Reference, signed: Reference) -> bool:
        return _exact(intended, signed)


@dataclass(frozen=True, slots=True)
class ExactReference:
    reference: Reference
    """A reference with a tag or a digest."""
    name = "exactReference"

    def matches(self, intended: Reference, signed: Reference) -> bool:
        return _exact(self.reference, signed)


@dataclass(frozen=True, slots=True)
class ExactRepository:
    repository: str
    """A fully expanded repository name."""
    name = "exactRepository"

    def matches(self, intended: Reference, signed: Reference) -> bool:
        return signed.name == self.repository


@dataclass(frozen=True, slots=True)
class RemapIdentity:
    prefix: str
    signed_prefix: str
    name = "remapIdentity"

    def matches(self, intended: Reference, signed: Reference) -> bool:
        repository = intended.name
        if repository != self.prefix and not repository.startswith(f"{self.prefix}/"):
            return _repo_digest_or_exact(intended, signed)
        try:
            remapped = parse_named(self.signed_prefix + str(intended)[len(self.prefix) :])
        except InvalidReference:
            return False
        return _repo_digest_or_exact(remapped, signed)


IdentityRule = (
    MatchRepoDigestOrExact | MatchRepository | MatchExact | ExactReference | ExactRepository | RemapIdentity
)


def _fields(value: Any, where: str, allowed: set[str]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise PolicyFormatError(f"{where} must be a JSON object")
    unknown = sorted(set(value) - allowed)
    if unknown:
        raise PolicyFormatError(f"{where} has unknown field(s) {', '.join(unknown)}")
    return value


def _string(document: dict[str, Any], key: str, where: str) -> str:
    value = document.get(key)
    if not isinstance(value, str) or not value:
        raise PolicyFormatError(f"{where} needs a non-empty string {key!r}")
    return value


def _prefix(text: str, where: str) -> str:
    """A remapIdentity prefix: `host[:port]`, a namespace or a repository, fully expanded."""
    if "/" not in text:
        try:
            Reference.parse(f"{text}/x")
        except InvalidReference:
            raise PolicyFormatError(f"{where}: {text!r} is not a host[:port]") from None
        return text
    try:
        reference = parse_named(text)
    except InvalidReference as error:
        raise PolicyFormatError(f"{where}: {error}") from None
    if not _is_name_only(reference) or reference.name != text:
        raise PolicyFormatError(f"{where}: {text!r} must be a fully expanded repository or namespace")
    return text


def parse_rule(value: Any, where: str) -> IdentityRule:
    """The `signedIdentity` object at `where`; None (absent) means `matchRepoDigestOrExact`."""
    if value is None:
        return MatchRepoDigestOrExact()
    kind = value.get("type") if isinstance(value, dict) else None
    where = f"{where}.signedIdentity"
    if kind in ("matchRepoDigestOrExact", "matchRepository", "matchExact"):
        _fields(value, where, {"type"})
        simple: IdentityRule = (
            MatchRepository()
            if kind == "matchRepository"
            else MatchExact()
            if kind == "matchExact"
            else MatchRepoDigestOrExact()
        )
        return simple
    if kind == "exactReference":
        text = _string(_fields(value, where, {"type", "dockerReference"}), "dockerReference", where)
        try:
            reference = parse_named(text)
        except InvalidReference as error:
            raise PolicyFormatError(f"{where}: {error}") from None
        if _is_name_only(reference):
            raise PolicyFormatError(f"{where}: dockerReference {text!r} has neither a tag nor a digest")
        return ExactReference(reference)
    if kind == "exactRepository":
        text = _string(_fields(value, where, {"type", "dockerRepository"}), "dockerRepository", where)
        try:
            return ExactRepository(parse_named(text).name)
        except InvalidReference as error:
            raise PolicyFormatError(f"{where}: {error}") from None
    if kind == "remapIdentity":
        document = _fields(value, where, {"type", "prefix", "signedPrefix"})
        prefix = _prefix(_string(document, "prefix", where), where)
        return RemapIdentity(prefix, _prefix(_string(document, "signedPrefix", where), where))
    raise PolicyFormatError(f"{where}: unknown type {kind!r}")
