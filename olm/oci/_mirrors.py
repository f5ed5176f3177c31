"""Registry mirrors and prefix rewrites from `registries.conf` (v2), as containers/image applies them.

The model (containers-registries.conf(5)): each `[[registry]]` has a `prefix` (a host, a host and
repository path, or `*.domain` for every subdomain; it defaults to `location`), the `location`
that serves it, its `[[registry.mirror]]`s, and `blocked` / `mirror-by-digest-only`. An image
belongs to the entry with the longest matching prefix. Its sources, in the order they are tried:

1. the mirrors allowed for this pull: none for a tag pull when `mirror-by-digest-only` is set, else
   each mirror whose `pull-from-mirror` (`all`, `digest-only`, `tag-only`) admits it;
2. the entry's own location, always last.

Each source's reference is the image's with the matched prefix replaced by the source's location
(an empty location, allowed with a wildcard prefix, keeps the reference as it is). A source whose
own entry (the longest prefix matching its rewritten name) is `blocked` is refused without a
request. `try_in_order` tries the sources one after the other until one answers, and when all fail
raises an error of the last failure's type whose message names every source and why it failed.

Not supported, and documented: `registries.conf.d` drop-ins, short names (`unqualified-search-
registries`, aliases; references here are always fully qualified), credential helpers. `insecure =
true` is accepted but loosens nothing: registries are always HTTPS with verified certificates. v1
files (`[registries.block]`, `[registries.insecure]`, `[registries.search]`) are read as
containers/image converts them: each blocked host becomes a blocked entry.

`RegistriesConf` follows one file: `current()` re-reads it when its fingerprint (inode, size,
modification time, symlinks followed) changed, as a mounted ConfigMap's file changes; a missing file
means no rules; a file that does not parse makes every pull fail, naming the file, until fixed.
"""

from __future__ import annotations

import enum
import tomllib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from olm.oci._errors import InvalidReference, RegistryError
from olm.oci._followed import Followed
from olm.oci._reference import Reference

T = TypeVar("T")

DEFAULT_PATH = Path("/etc/containers/registries.conf")
"""Where containers/image (and so upstream OLM) reads the file."""


class InvalidRegistriesConf(RegistryError):
    """`registries.conf` does not parse or breaks a rule of the format; every pull fails until it is
    fixed (as with containers/image), since pulling around it could reach a source it forbids."""


class Blocked(RegistryError):
    """A `registries.conf` entry with `blocked = true` covers the source; no request was made."""


class PullFromMirror(enum.StrEnum):
    """Which pulls a mirror serves (`pull-from-mirror`)."""

    ALL = "all"
    DIGEST_ONLY = "digest-only"
    TAG_ONLY = "tag-only"

    def admits(self, digested: bool) -> bool:
        return self is PullFromMirror.ALL or (self is PullFromMirror.DIGEST_ONLY) == digested


@dataclass(frozen=True, slots=True)
class Mirror:
    location: str
    pull_from_mirror: PullFromMirror = PullFromMirror.ALL


@dataclass(frozen=True, slots=True)
class Registry:
    """One `[[registry]]` entry, normalised (`prefix` set, trailing slashes dropped)."""

    prefix: str
    location: str
    blocked: bool = False
    mirror_by_digest_only: bool = False
    mirrors: tuple[Mirror, ...] = ()

    def match(self, text: str) -> int:
        """Where the matched prefix of `text` (a name or reference string) ends; -1 if it does not
        match. A plain prefix must end at `:`, `/` or `@` (or the end); a `*.domain` one matches
        any host ending in `.domain`, before the first `/`."""
        if self.prefix.startswith("*."):
            suffix = self.prefix[1:]
            index = text.find(suffix)
            if index == -1 or "/" in text[:index]:
                return -1
            end = index + len(suffix)
        elif text.startswith(self.prefix):
            end = len(self.prefix)
        else:
            return -1
        return end if end == len(text) or text[end] in ":/@" else -1


@dataclass(frozen=True, slots=True)
class Source:
    """One place to pull an image from."""

    reference: Reference
    """The image's reference rewritten for this source."""
    blocked_by: str | None = None
    """The prefix of the blocked entry that refuses this source, if any."""


@dataclass(frozen=True, slots=True)
class Config:
    """A parsed `registries.conf`; `origin` (its path) names it in messages."""

    registries: tuple[Registry, ...] = ()
    origin: str = str(DEFAULT_PATH)

    def find(self, name: str) -> Registry | None:
        """The entry with the longest prefix matching `name`; the first of equal ones wins."""
        found: Registry | None = None
        for registry in self.registries:
            if registry.match(name) != -1 and (found is None or len(registry.prefix) > len(found.prefix)):
                found = registry
        return found

    def sources(self, reference: Reference) -> tuple[Source, ...]:
        """Where to pull `reference` from, in order: the allowed mirrors, then the primary location."""
        registry = self.find(reference.name)
        if registry is None:
            return (Source(reference),)
        digested = reference.digest is not None
        if registry.mirror_by_digest_only:
            mirrors = registry.mirrors if digested else ()
        else:
            mirrors = tuple(m for m in registry.mirrors if m.pull_from_mirror.admits(digested))
        result = []
        for location in [*(m.location for m in mirrors), registry.location]:
            rewritten = self._rewrite(reference, registry, location)
            blocking = self.find(rewritten.name)
            blocked_by = blocking.prefix if blocking is not None and blocking.blocked else None
            result.append(Source(rewritten, blocked_by=blocked_by))
        return tuple(result)

    def _rewrite(self, reference: Reference, registry: Registry, location: str) -> Reference:
        if not location:  # a wildcard prefix without a location: the image's own host
            return reference
        text = str(reference)
        rewritten = location + text[registry.match(text) :]
        try:
            return Reference.parse(rewritten)
        except InvalidReference as error:
            raise InvalidRegistriesConf(
                f"{self.origin}: rewriting {text} from prefix {registry.prefix!r} to location "
                f"{location!r} gives an invalid reference: {error}"
            ) from None


def parse(data: str, origin: str = str(DEFAULT_PATH)) -> Config:
    """A `registries.conf` document (v2, or v1 converted); raises `InvalidRegistriesConf`."""
    try:
        document = tomllib.loads(data)
    except tomllib.TOMLDecodeError as error:
        raise InvalidRegistriesConf(f"{origin} is not valid TOML: {error}") from None
    v1 = document.get("registries")
    if isinstance(v1, Mapping) and v1:
        if document.get("registry"):
            raise InvalidRegistriesConf(f"{origin}: mixing the v1 and v2 formats is not supported")
        return Config(tuple(_from_v1(v1, origin)), origin)
    entries = document.get("registry", [])
    if not isinstance(entries, list):
        raise InvalidRegistriesConf(f"{origin}: 'registry' must be an array of tables ([[registry]])")
    parsed = [
        _registry(entry, f"{origin}: [[registry]] #{number}") for number, entry in enumerate(entries, 1)
    ]
    _check_conflicts(parsed, origin)
    registries: dict[str, Registry] = {}
    for registry in parsed:
        registries.setdefault(registry.prefix, registry)  # a repeated prefix: the first one wins
    return Config(tuple(sorted(registries.values(), key=lambda r: r.prefix)), origin)


def _registry(entry: Any, where: str) -> Registry:
    if not isinstance(entry, dict):
        raise InvalidRegistriesConf(f"{where} is not a table")
    location = _location(entry, "location", where)
    prefix = _location(entry, "prefix", where) or location
    if not prefix:
        raise InvalidRegistriesConf(f"{where}: both location and prefix are unset")
    if prefix.startswith("*."):
        if any(c in prefix for c in "/@:"):
            raise InvalidRegistriesConf(
                f"{where}: wildcard prefix {prefix!r} must be of the form *.example.com"
            )
    elif not location:
        raise InvalidRegistriesConf(f"{where}: location is unset and prefix {prefix!r} is not *.domain")
    if "pull-from-mirror" in entry:
        raise InvalidRegistriesConf(f"{where}: pull-from-mirror must not be set for a non-mirror registry")
    by_digest = _bool(entry, "mirror-by-digest-only", where)
    mirrors_raw = entry.get("mirror", [])
    if not isinstance(mirrors_raw, list):
        raise InvalidRegistriesConf(f"{where}: 'mirror' must be an array of tables ([[registry.mirror]])")
    mirrors = []
    for number, raw in enumerate(mirrors_raw, 1):
        at = f"{where} mirror #{number}"
        if not isinstance(raw, dict):
            raise InvalidRegistriesConf(f"{at} is not a table")
        mirror_location = _location(raw, "location", at)
        if not mirror_location:
            raise InvalidRegistriesConf(f"{at}: location is unset")
        _bool(raw, "insecure", at)  # accepted, loosens nothing (module docstring)
        mode = raw.get("pull-from-mirror", "")
        if mode and by_digest:
            raise InvalidRegistriesConf(
                f"{at}: pull-from-mirror cannot be set when the registry sets mirror-by-digest-only"
            )
        try:
            pull_from = PullFromMirror(mode or PullFromMirror.ALL)
        except ValueError:
            raise InvalidRegistriesConf(
                f"{at}: pull-from-mirror {mode!r} is not one of all, digest-only, tag-only"
            ) from None
        mirrors.append(Mirror(mirror_location, pull_from))
    _bool(entry, "insecure", where)
    return Registry(
        prefix=prefix,
        location=location,
        blocked=_bool(entry, "blocked", where),
        mirror_by_digest_only=by_digest,
        mirrors=tuple(mirrors),
    )


def _location(table: Mapping[str, Any], key: str, where: str) -> str:
    value = table.get(key, "")
    if not isinstance(value, str):
        raise InvalidRegistriesConf(f"{where}: {key} must be a string")
    if value.startswith(("http://", "https://")):
        raise InvalidRegistriesConf(f"{where}: {key} {value!r}: URI schemes are not supported")
    return value.rstrip("/")


def _bool(table: Mapping[str, Any], key: str, where: str) -> bool:
    value = table.get(key, False)
    if not isinstance(value, bool):
        raise InvalidRegistriesConf(f"{where}: {key} must be true or false")
    return value


def _check_conflicts(registries: Sequence[Registry], origin: str) -> None:
    """Entries of one location must agree on `blocked`, as containers/image requires."""
    seen: dict[str, bool] = {}
    for registry in registries:
        key = registry.location or registry.prefix
        if seen.setdefault(key, registry.blocked) != registry.blocked:
            raise InvalidRegistriesConf(
                f"{origin}: registry {key!r} is defined more than once with conflicting 'blocked'"
            )


def _from_v1(tables: Mapping[str, Any], origin: str) -> list[Registry]:
    """v1's `[registries.block]` hosts as blocked entries (search and insecure change nothing here)."""
    block = tables.get("block", {})
    hosts = block.get("registries", []) if isinstance(block, Mapping) else None
    if not isinstance(hosts, list) or not all(isinstance(h, str) for h in hosts):
        raise InvalidRegistriesConf(f"{origin}: [registries.block] registries must be a list of strings")
    locations = dict.fromkeys(h.rstrip("/") for h in hosts if h.rstrip("/"))
    return sorted((Registry(prefix=h, location=h, blocked=True) for h in locations), key=lambda r: r.prefix)


async def try_in_order(
    sources: Sequence[Source], origin: str, verb: str, attempt: Callable[[Reference], Awaitable[T]]
) -> T:
    """`attempt` on each source until one succeeds (containers/image falls through on any error);
    `verb` (`resolving`, `fetching manifest`) starts the message of a blocked source.

    With one source and no rule involved this is just `attempt`. When every source fails, the error
    has the type of the last failure (the primary location's, which decides whether to retry) and
    a message listing each source tried, in order, with its failure."""
    failures: list[RegistryError] = []
    for source in sources:
        if source.blocked_by is not None:
            failures.append(
                Blocked(
                    f"{verb} {source.reference}: registry {source.reference.registry} is blocked by "
                    f"{origin} ([[registry]] prefix {source.blocked_by!r} sets blocked = true)"
                )
            )
            continue
        try:
            return await attempt(source.reference)
        except RegistryError as error:
            failures.append(error)
    if len(failures) == 1:
        raise failures[0]
    listed = "; ".join(f"[{n}] {failure}" for n, failure in enumerate(failures, 1))
    raise type(failures[-1])(f"every source failed (mirrors of {origin}): {listed}")


class RegistriesConf:
    """One `registries.conf` file, re-read when it changes; `path` None means no rules at all."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._followed = Followed(lambda: () if path is None else (path,), _read)

    @property
    def generation(self) -> int:
        """How many times the file was read: one more per change seen."""
        return self._followed.generation

    def current(self) -> Config:
        """The rules as the file holds them now; raises `InvalidRegistriesConf` while it is broken."""
        return self._followed.current()


def _read(paths: tuple[Path, ...]) -> Config:
    """The rules `registries.conf` holds (none when it is unset or absent)."""
    if not paths:
        return Config(origin=str(DEFAULT_PATH))
    (path,) = paths
    try:
        data = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Config(origin=str(path))
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        raise InvalidRegistriesConf(f"{path} cannot be read: {reason}") from None
    return parse(data, str(path))
