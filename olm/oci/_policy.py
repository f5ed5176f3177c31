"""containers-policy.json(5): the signature policy document, parsed strictly, and its scope lookup.

A policy is a `default` list of requirements and, per transport, a map from scope to requirements.
Only the `docker` transport (registries) matters here; other transports' sections are read and
ignored, so a host's ordinary policy file loads. For an image, `Policy.requirements_for` picks the
most specific `docker` scope that names it, in containers/image's order:

1. the reference itself, `host[:port]/repo:tag` or `host[:port]/repo@digest`;
2. the repository, then each parent namespace, then `host[:port]`;
3. wildcards of the host (port dropped): `*.b.example` then `*.example` for `a.b.example`;
4. the `docker` transport's `""` scope;
5. the global `default`.

Every requirement of the chosen scope must accept the image. Requirement types:
`insecureAcceptAnything`, `reject` and `sigstoreSigned` with public keys (`keyPath`, `keyPaths`,
`keyData`, `keyDatas`) are enforced. `signedBy` (GPG keys) and `sigstoreSigned` with `fulcio`, `pki`
or `rekorPublicKey*` are read but not supported: an image whose scope requires one is refused with a
message naming it, never accepted. Unknown fields or types make the whole document invalid, as in
containers/image. Key files are read when a requirement is evaluated, so a changed key is used at
once.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from olm.oci._errors import InvalidReference
from olm.oci._identity import IdentityRule, PolicyFormatError, parse_named, parse_rule
from olm.oci._reference import _DOMAIN, Reference

__all__ = [
    "DEFAULT_SCOPE",
    "InsecureAcceptAnything",
    "Policy",
    "PolicyFormatError",
    "Reject",
    "Requirement",
    "Scope",
    "SigstoreSigned",
    "Unsupported",
    "parse_policy",
]

DOCKER = "docker"
DEFAULT_SCOPE = "default"
"""How the global `default` is named in messages (it is no scope of the docker transport)."""

_SIGSTORE_KEYS = ("keyPath", "keyPaths", "keyData", "keyDatas")
_SIGSTORE_UNSUPPORTED = (
    "fulcio",
    "pki",
    "rekorPublicKeyPath",
    "rekorPublicKeyPaths",
    "rekorPublicKeyData",
    "rekorPublicKeyDatas",
)


@dataclass(frozen=True, slots=True)
class InsecureAcceptAnything:
    name = "insecureAcceptAnything"


@dataclass(frozen=True, slots=True)
class Reject:
    name = "reject"


@dataclass(frozen=True, slots=True)
class SigstoreSigned:
    """Accepts an image with at least one cosign signature that one of the keys verifies, whose
    payload names the image's manifest digest and an identity `identity` accepts."""

    key_paths: tuple[Path, ...]
    key_data: tuple[bytes, ...]
    """PEM public keys given inline (`keyData`/`keyDatas`, base64 in the document)."""
    identity: IdentityRule
    name = "sigstoreSigned"


@dataclass(frozen=True, slots=True)
class Unsupported:
    """A requirement of the format that this implementation cannot check: it refuses the image."""

    name: str
    what: str
    """Which part is unsupported, for the message (e.g. `GPG keys`, `fulcio`)."""


Requirement = InsecureAcceptAnything | Reject | SigstoreSigned | Unsupported


@dataclass(frozen=True, slots=True)
class Scope:
    """The scope requirements were found for: a `docker` scope key, or the global `default`."""

    key: str
    is_default: bool = False

    def __str__(self) -> str:
        if self.is_default:
            return f'the policy "{DEFAULT_SCOPE}"'
        if not self.key:
            return 'the docker transport\'s default scope ""'
        return f'scope "{self.key}"'


@dataclass(frozen=True, slots=True)
class Policy:
    default: tuple[Requirement, ...]
    docker: dict[str, tuple[Requirement, ...]]

    def requirements_for(self, reference: Reference) -> tuple[Scope, tuple[Requirement, ...]]:
        """The requirements of the most specific scope naming `reference` (see the module doc)."""
        for key in scope_candidates(reference):
            if key in self.docker:
                return Scope(key), self.docker[key]
        if "" in self.docker:
            return Scope(""), self.docker[""]
        return Scope(DEFAULT_SCOPE, is_default=True), self.default


def scope_candidates(reference: Reference) -> list[str]:
    """The `docker` scopes that name `reference`, most specific first (the `""` scope excluded)."""
    identity = (
        f"{reference.name}@{reference.digest}" if reference.digest else f"{reference.name}:{reference.tag}"
    )
    candidates = [identity]
    name = reference.name
    while True:
        candidates.append(name)
        slash = name.rfind("/")
        if slash < 0:
            break
        name = name[:slash]
    host, _, port = reference.registry.rpartition(":")
    if not (host and port.isdigit() and not reference.registry.endswith("]")):
        host = reference.registry  # no port to drop
    while (dot := host.find(".")) >= 0:
        host = host[dot + 1 :]
        candidates.append(f"*.{host}")
    return candidates


def parse_policy(data: bytes) -> Policy:
    """Parse a policy document; `PolicyFormatError` says what is wrong and where."""
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError as error:
        raise PolicyFormatError(f"not valid JSON: {error}") from None
    if not isinstance(document, dict):
        raise PolicyFormatError("the document must be a JSON object")
    unknown = sorted(set(document) - {"default", "transports"})
    if unknown:
        raise PolicyFormatError(f"unknown top-level field(s) {', '.join(unknown)}")
    if "default" not in document:
        raise PolicyFormatError('"default" is required')
    default = _requirements(document["default"], "default")
    transports = document.get("transports") or {}
    if not isinstance(transports, dict):
        raise PolicyFormatError('"transports" must be a JSON object')
    docker: dict[str, tuple[Requirement, ...]] = {}
    for transport, scopes in transports.items():
        if not isinstance(scopes, dict):
            raise PolicyFormatError(f"transports.{transport} must be a JSON object")
        for scope, requirements in scopes.items():
            where = f"transports.{transport}[{scope!r}]"
            parsed = _requirements(requirements, where)
            if transport == DOCKER:
                _check_docker_scope(scope, where)
                docker[scope] = parsed
    return Policy(default=default, docker=docker)


def _check_docker_scope(scope: str, where: str) -> None:
    """A `docker` scope is `""`, `*.domain`, `host[:port]` or a fully expanded repository,
    namespace, `repo:tag` or `repo@digest` (`busybox` must be written `docker.io/library/busybox`)."""
    if not scope:
        return
    if scope.startswith("*."):
        if ":" in scope or "/" in scope or not _DOMAIN.match(scope[2:]):
            raise PolicyFormatError(f"{where}: a wildcard scope is *.domain, without port or path")
        return
    if "/" not in scope:
        if not _DOMAIN.match(scope):
            raise PolicyFormatError(f"{where}: {scope!r} is not a host[:port]")
        return
    try:
        reference = parse_named(scope)
    except InvalidReference as error:
        raise PolicyFormatError(f"{where}: {error}") from None
    if str(reference) != scope:
        raise PolicyFormatError(f"{where}: write the scope fully expanded, as {str(reference)!r}")


def _requirements(value: Any, where: str) -> tuple[Requirement, ...]:
    if not isinstance(value, list) or not value:
        raise PolicyFormatError(f"{where} must be a non-empty list of requirements")
    return tuple(_requirement(item, f"{where}[{index}]") for index, item in enumerate(value))


def _requirement(value: Any, where: str) -> Requirement:
    if not isinstance(value, dict):
        raise PolicyFormatError(f"{where} must be a JSON object")
    kind = value.get("type")
    if kind in ("insecureAcceptAnything", "reject"):
        _only(value, where, {"type"})
        return InsecureAcceptAnything() if kind == "insecureAcceptAnything" else Reject()
    if kind == "signedBy":
        _only(value, where, {"type", "keyType", "keyPath", "keyPaths", "keyData", "signedIdentity"})
        return Unsupported("signedBy", "GPG signatures")
    if kind == "sigstoreSigned":
        return _sigstore(value, where)
    raise PolicyFormatError(f"{where}: unknown requirement type {kind!r}")


def _only(value: dict[str, Any], where: str, allowed: set[str]) -> None:
    unknown = sorted(set(value) - allowed)
    if unknown:
        raise PolicyFormatError(f"{where} has unknown field(s) {', '.join(unknown)}")


def _sigstore(value: dict[str, Any], where: str) -> Requirement:
    _only(value, where, {"type", "signedIdentity", *_SIGSTORE_KEYS, *_SIGSTORE_UNSUPPORTED})
    identity = parse_rule(value.get("signedIdentity"), where)
    unsupported = [key for key in _SIGSTORE_UNSUPPORTED if key in value]
    given = [key for key in _SIGSTORE_KEYS if key in value]
    roots = given + [key for key in ("fulcio", "pki") if key in value]
    if len(roots) != 1:
        raise PolicyFormatError(
            f"{where}: sigstoreSigned needs exactly one of keyPath, keyPaths, keyData, keyDatas, fulcio, pki"
        )
    if unsupported:
        return Unsupported("sigstoreSigned", ", ".join(unsupported))
    key = given[0]
    items = value[key] if key.endswith("s") else [value[key]]
    if not isinstance(items, list) or not items or not all(isinstance(i, str) and i for i in items):
        raise PolicyFormatError(f"{where}.{key} must be a non-empty string or list of them")
    if key.startswith("keyPath"):
        return SigstoreSigned(key_paths=tuple(Path(i) for i in items), key_data=(), identity=identity)
    try:
        data = tuple(base64.b64decode(i, validate=True) for i in items)
    except binascii.Error:
        raise PolicyFormatError(f"{where}.{key} is not base64") from None
    return SigstoreSigned(key_paths=(), key_data=data, identity=identity)
