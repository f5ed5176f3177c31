"""Content digests (`sha256:<hex>`, `sha512:<hex>`): parsing, hashing, verifying."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

from olm.oci._errors import InvalidReference

_HEX_LENGTH = {"sha256": 64, "sha512": 128}
_FORM = re.compile(r"^([a-z0-9]+(?:[.+_-][a-z0-9]+)*):([a-zA-Z0-9=_-]+)$")


@dataclass(frozen=True, slots=True, order=True)
class Digest:
    """A verified-shape digest; only sha256 and sha512 are accepted (as registries do)."""

    algorithm: str
    hex: str

    @classmethod
    def parse(cls, text: str) -> Digest:
        match = _FORM.match(text)
        if match is None:
            raise InvalidReference(f"{text!r} is not a digest (expected <algorithm>:<hex>)")
        algorithm, hex_ = match.groups()
        expected = _HEX_LENGTH.get(algorithm)
        if expected is None:
            raise InvalidReference(f"digest algorithm {algorithm!r} is not supported (sha256, sha512)")
        if len(hex_) != expected or not re.fullmatch(r"[0-9a-f]+", hex_):
            raise InvalidReference(
                f"{text!r} is not a valid {algorithm} digest ({expected} lowercase hex digits)"
            )
        return cls(algorithm, hex_)

    @classmethod
    def of(cls, data: bytes, algorithm: str = "sha256") -> Digest:
        return cls(algorithm, hashlib.new(algorithm, data).hexdigest())

    def hasher(self) -> Any:
        """A fresh `hashlib` object of this digest's algorithm."""
        return hashlib.new(self.algorithm)

    def matches(self, hasher: Any) -> bool:
        """Whether a fed `hasher` (from `hasher()`) produced this digest."""
        return bool(hasher.hexdigest() == self.hex)

    def __str__(self) -> str:
        return f"{self.algorithm}:{self.hex}"
