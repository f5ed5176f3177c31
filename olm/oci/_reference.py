"""Image references: `[host[:port]/]path[:tag][@digest]`, parsed and validated.

The grammar is distribution's: lowercase path components separated by `/` (`.`, `_`, `__` or
dashes inside a component), a tag of up to 128 word characters, dots and dashes, a sha256/sha512
digest. As with docker and containers/image, a first component that is not a host (no `.` or `:`,
not `localhost`) means Docker Hub: `busybox` is `docker.io/library/busybox`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from olm.oci._digest import Digest
from olm.oci._errors import InvalidReference

DOCKER_HUB = "docker.io"
DOCKER_HUB_API = "registry-1.docker.io"
MAX_NAME_LENGTH = 255

_DOMAIN = re.compile(
    r"^(?:(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*"
    r"|\[[0-9a-fA-F:.]+\])(?::[0-9]+)?$"
)
_COMPONENT = re.compile(r"^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$")
_TAG = re.compile(r"^[\w][\w.-]{0,127}$")


@dataclass(frozen=True, slots=True)
class Reference:
    """A parsed image reference; `registry` is the host as written (normalised for Docker Hub)."""

    registry: str
    repository: str
    tag: str | None = None
    digest: Digest | None = None

    @classmethod
    def parse(cls, text: str) -> Reference:
        if not text or text != text.strip():
            raise InvalidReference(f"{text!r} is not an image reference")
        rest, digest = text, None
        if "@" in rest:
            rest, _, digest_text = rest.partition("@")
            digest = Digest.parse(digest_text)
        tag = None
        slash, colon = rest.rfind("/"), rest.rfind(":")
        if colon > slash:
            rest, tag = rest[:colon], rest[colon + 1 :]
            if not _TAG.match(tag):
                raise InvalidReference(
                    f"{text!r}: tag {tag!r} is not valid (word characters, '.', '-'; <= 128)"
                )
        registry, repository = _split_domain(rest, text)
        if len(repository) + len(registry) + 1 > MAX_NAME_LENGTH:
            raise InvalidReference(
                f"{text!r}: the repository name is longer than {MAX_NAME_LENGTH} characters"
            )
        for component in repository.split("/"):
            if not _COMPONENT.match(component):
                raise InvalidReference(
                    f"{text!r}: path component {component!r} is not valid (lowercase letters, digits, "
                    "and '.', '_', '__' or '-' between them)"
                )
        if tag is None and digest is None:
            tag = "latest"
        return cls(registry=registry, repository=repository, tag=tag, digest=digest)

    @property
    def api_host(self) -> str:
        """The host to talk to (Docker Hub's API lives on another name than its references)."""
        return DOCKER_HUB_API if self.registry == DOCKER_HUB else self.registry

    @property
    def name(self) -> str:
        """`registry/repository`, without tag or digest."""
        return f"{self.registry}/{self.repository}"

    @property
    def target(self) -> str:
        """What to ask the manifests endpoint for: the digest if known, else the tag."""
        return str(self.digest) if self.digest is not None else str(self.tag)

    def with_digest(self, digest: Digest) -> Reference:
        """The canonical form: this repository at `digest`, without a tag."""
        return replace(self, tag=None, digest=digest)

    def __str__(self) -> str:
        text = self.name
        if self.tag is not None:
            text += f":{self.tag}"
        if self.digest is not None:
            text += f"@{self.digest}"
        return text


def _split_domain(name: str, original: str) -> tuple[str, str]:
    first, sep, remainder = name.partition("/")
    if sep and ("." in first or ":" in first or first == "localhost" or first != first.lower()):
        if not _DOMAIN.match(first):
            raise InvalidReference(f"{original!r}: {first!r} is not a valid registry host")
        port = first.rpartition(":")[2] if not first.endswith("]") else ""
        if port.isdigit() and not 0 < int(port) < 1 << 16:
            # The domain grammar allows any digits; a URL with such a port cannot even be built.
            raise InvalidReference(f"{original!r}: port {port} is out of range (1-65535)")
        if not remainder:
            raise InvalidReference(f"{original!r} has no repository path")
        if first in (DOCKER_HUB, "index.docker.io"):
            return DOCKER_HUB, remainder if "/" in remainder else f"library/{remainder}"
        return first, remainder
    if not name:
        raise InvalidReference(f"{original!r} has no repository path")
    if "/" not in name:
        return DOCKER_HUB, f"library/{name}"
    return DOCKER_HUB, name
