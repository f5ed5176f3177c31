"""One FBC object ("meta"): its identity, its bytes, and where it came from."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

SCHEMA_PACKAGE: Final = "olm.package"
SCHEMA_CHANNEL: Final = "olm.channel"
SCHEMA_BUNDLE: Final = "olm.bundle"
SCHEMA_DEPRECATIONS: Final = "olm.deprecations"


@dataclass(frozen=True, slots=True)
class Origin:
    """Where an object was read: a path relative to the catalog root and the line it starts on."""

    path: str
    line: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass(frozen=True, slots=True)
class Meta:
    """One object of a File-Based Catalog, as served: compact JSON plus the fields the index uses.

    `package` is the object's `package` field; an `olm.package` has none (its own name is in `name`).
    `blob` is the whole object re-encoded as compact JSON (key order of the source kept, no trailing
    newline); typed views parse it on demand.
    """

    schema: str
    package: str
    name: str
    blob: bytes
    origin: Origin

    def describe(self) -> str:
        """A short, deterministic way to name this object in messages."""
        parts = [self.schema or "<no schema>"]
        if self.package:
            parts.append(f"package {self.package!r}")
        if self.name:
            parts.append(f"name {self.name!r}")
        return " ".join(parts)
