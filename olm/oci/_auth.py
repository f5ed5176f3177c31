"""Registry credentials (dockerconfigjson pull secrets) and `WWW-Authenticate` challenges.

A `Keychain` is built from the `.dockerconfigjson` (or legacy `.dockercfg`) data of one or more
pull Secrets. Keys may be a host (`quay.io`, `127.0.0.1:5000`), a URL (`https://index.docker.io/v1/`)
or a host with a repository path prefix (`quay.io/my-org`); the most specific key that covers an
image wins, and when several Secrets are merged the first one given wins for equal keys.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from dataclasses import dataclass

import orjson

from olm.oci._reference import DOCKER_HUB, Reference

_DOCKER_HUB_ALIASES = ("index.docker.io", "registry-1.docker.io", "registry.hub.docker.com", "docker.io")


@dataclass(frozen=True, slots=True)
class Credentials:
    """A username and password, or an identity (refresh) token for the token endpoint."""

    username: str = ""
    password: str = ""
    identity_token: str = ""

    def basic(self) -> str:
        """The value of an `Authorization: Basic` header."""
        pair = f"{self.username}:{self.password}".encode()
        return "Basic " + base64.b64encode(pair).decode("ascii")

    def __repr__(self) -> str:  # never print secrets
        return f"Credentials(username={self.username!r}, password=***)"


class InvalidPullSecret(ValueError):
    """Pull secret data that is not a dockerconfigjson document."""


def _normalise_key(key: str) -> str:
    key = re.sub(r"^[a-z]+://", "", key.strip()).rstrip("/")
    host, _, path = key.partition("/")
    if host in _DOCKER_HUB_ALIASES:
        host = DOCKER_HUB
        if path in ("v1", "v2"):
            path = ""
    return f"{host}/{path}" if path else host


class Keychain:
    """Credentials by registry (and optional repository prefix)."""

    def __init__(self, entries: Mapping[str, Credentials] | None = None) -> None:
        self._entries: dict[str, Credentials] = {}
        for key, credentials in (entries or {}).items():
            self._entries.setdefault(_normalise_key(key), credentials)

    @classmethod
    def from_dockerconfigjson(cls, data: bytes | str) -> Keychain:
        """Parse the `.dockerconfigjson` (`{"auths": {...}}`) or `.dockercfg` (`{...}`) Secret value."""
        try:
            document = orjson.loads(data)
        except orjson.JSONDecodeError:
            raise InvalidPullSecret("the pull secret is not valid JSON") from None
        if not isinstance(document, dict):
            raise InvalidPullSecret("the pull secret is not a JSON object")
        auths = document.get("auths", document)
        if not isinstance(auths, dict):
            raise InvalidPullSecret("the pull secret's 'auths' is not an object")
        entries: dict[str, Credentials] = {}
        for key, entry in auths.items():
            if isinstance(entry, dict):
                entries[key] = _credentials(key, entry)
        return cls(entries)

    def merged(self, other: Keychain) -> Keychain:
        """A keychain with this one's entries, then `other`'s for keys this one lacks."""
        merged = Keychain()
        merged._entries = {**other._entries, **self._entries}
        return merged

    def __len__(self) -> int:
        return len(self._entries)

    def __eq__(self, other: object) -> bool:
        """Equal when every key has the same credentials (a pull secret rewritten as it was)."""
        return isinstance(other, Keychain) and self._entries == other._entries

    def __hash__(self) -> int:
        return hash(frozenset(self._entries.items()))

    def for_reference(self, reference: Reference) -> Credentials | None:
        """The credentials of the most specific key covering `reference`, if any."""
        parts = reference.repository.split("/")
        for length in range(len(parts), -1, -1):
            key = "/".join([reference.registry, *parts[:length]])
            if key in self._entries:
                return self._entries[key]
        return None


def _credentials(key: str, entry: dict[str, object]) -> Credentials:
    username = str(entry.get("username") or "")
    password = str(entry.get("password") or "")
    auth = entry.get("auth")
    if isinstance(auth, str) and auth:
        try:
            decoded = base64.b64decode(auth, validate=True).decode()
        except (binascii.Error, UnicodeDecodeError):
            raise InvalidPullSecret(f"the 'auth' of {key!r} is not base64 of 'user:password'") from None
        if ":" not in decoded:
            raise InvalidPullSecret(f"the 'auth' of {key!r} is not base64 of 'user:password'")
        username, _, password = decoded.partition(":")
    return Credentials(username, password, str(entry.get("identitytoken") or ""))


@dataclass(frozen=True, slots=True)
class Challenge:
    """One `WWW-Authenticate` challenge: scheme (lowercased) and parameters."""

    scheme: str
    params: dict[str, str]


_TOKEN = r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"
_PARAM = re.compile(rf'\s*({_TOKEN})\s*=\s*(?:"((?:[^"\\]|\\.)*)"|({_TOKEN}))\s*,?')
_SCHEME = re.compile(rf"\s*({_TOKEN})(?:\s+|$|(?=,))")


def parse_challenges(header: str) -> list[Challenge]:
    """Parse a `WWW-Authenticate` value into challenges (several may share one header)."""
    challenges: list[Challenge] = []
    pos = 0
    while pos < len(header):
        scheme = _SCHEME.match(header, pos)
        if scheme is None:
            break
        pos = scheme.end()
        params: dict[str, str] = {}
        while (param := _PARAM.match(header, pos)) is not None:
            quoted, bare = param.group(2), param.group(3)
            value = re.sub(r"\\(.)", r"\1", quoted) if quoted is not None else bare
            params[param.group(1).lower()] = value
            pos = param.end()
        challenges.append(Challenge(scheme.group(1).lower(), params))
        while pos < len(header) and header[pos] in " \t,":
            pos += 1
    return challenges
