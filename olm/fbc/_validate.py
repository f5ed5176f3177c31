"""The rules a catalog must follow, checked in one streaming pass.

`Validator` looks at each meta as it goes by and keeps only names and origins, so validating a
catalog of hundreds of megabytes costs memory in proportion to its number of objects, not its size.
Rules (the ones the upstream model conversion enforces):

- every object has a schema; an `olm.package` has a name, and names are unique per schema and package;
- a package names a `defaultChannel`, and that channel exists;
- a channel and a bundle name an existing package; channel entries are unique, and each names a
  bundle of the same package; every bundle is an entry of at least one channel;
- a bundle has exactly one `olm.package` property, its `packageName` is the bundle's package and its
  `version` is a semantic version;
- an `olm.deprecations` object names an existing package (once), and the channels and bundles it
  references exist in it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from olm.fbc._errors import InvalidCatalog, Problem, ShapeError
from olm.fbc._meta import SCHEMA_BUNDLE, SCHEMA_CHANNEL, SCHEMA_PACKAGE, Meta, Origin
from olm.fbc._model import PROPERTY_PACKAGE, Bundle, Channel, Deprecations, Package, view

MAX_PROBLEMS = 1000
"""Problems kept per validation; a catalog this broken gains nothing from a longer list."""

SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
)
"""Semantic Versioning 2.0.0, exactly (no leading `v`, no missing parts)."""


@dataclass(slots=True)
class _Package:
    origin: Origin
    default_channel: str
    channels: dict[str, tuple[Origin, tuple[str, ...]]] = field(default_factory=dict)
    bundles: dict[str, Origin] = field(default_factory=dict)


class Validator:
    """Feed every meta to `add`, then call `problems()` (or `raise_if_invalid()`) once."""

    def __init__(self) -> None:
        self._problems: list[Problem] = []
        self._dropped = 0
        self._packages: dict[str, _Package] = {}
        self._channels: list[tuple[Origin, str, str, tuple[str, ...]]] = []
        self._bundles: list[tuple[Origin, str, str]] = []
        self._deprecations: dict[str, tuple[Origin, Deprecations]] = {}
        self._finished: list[Problem] | None = None

    def _problem(self, origin: Origin | None, subject: str, message: str) -> None:
        if len(self._problems) < MAX_PROBLEMS:
            self._problems.append(Problem(origin, subject, message))
        else:
            self._dropped += 1

    def add(self, meta: Meta) -> None:
        subject = meta.describe()
        try:
            typed = view(meta)
        except ShapeError as error:
            self._problem(meta.origin, subject, str(error))
            return
        if isinstance(typed, Package):
            self._add_package(meta, typed, subject)
        elif isinstance(typed, Channel):
            self._add_channel(meta, typed, subject)
        elif isinstance(typed, Bundle):
            self._add_bundle(meta, typed, subject)
        elif isinstance(typed, Deprecations):
            if not typed.package:
                self._problem(meta.origin, subject, "package must be set")
            elif typed.package in self._deprecations:
                earlier = self._deprecations[typed.package][0]
                self._problem(
                    meta.origin, subject, f"second olm.deprecations for the package (first at {earlier})"
                )
            else:
                self._deprecations[typed.package] = (meta.origin, typed)

    def _add_package(self, meta: Meta, package: Package, subject: str) -> None:
        if not package.name:
            self._problem(meta.origin, subject, "name must be set")
        elif package.name in self._packages:
            first = self._packages[package.name].origin
            self._problem(meta.origin, subject, f"duplicate package (first defined at {first})")
        else:
            self._packages[package.name] = _Package(meta.origin, package.default_channel)

    def _add_channel(self, meta: Meta, channel: Channel, subject: str) -> None:
        if not channel.name or not channel.package:
            self._problem(meta.origin, subject, "name and package must be set")
            return
        names = tuple(entry.name for entry in channel.entries)
        seen: set[str] = set()
        for name in names:
            if not name:
                self._problem(meta.origin, subject, "a channel entry has no name")
            elif name in seen:
                self._problem(meta.origin, subject, f"duplicate entry {name!r}")
            seen.add(name)
        self._channels.append((meta.origin, channel.package, channel.name, names))

    def _add_bundle(self, meta: Meta, bundle: Bundle, subject: str) -> None:
        if not bundle.name or not bundle.package:
            self._problem(meta.origin, subject, "name and package must be set")
            return
        values = bundle.properties_of(PROPERTY_PACKAGE)
        if len(values) != 1:
            self._problem(
                meta.origin,
                subject,
                f"must have exactly one {PROPERTY_PACKAGE!r} property, found {len(values)}",
            )
        else:
            value = values[0] if isinstance(values[0], dict) else {}
            if value.get("packageName") != bundle.package:
                found = value.get("packageName")
                self._problem(meta.origin, subject, f"{PROPERTY_PACKAGE!r} property names package {found!r}")
            version = value.get("version")
            if not isinstance(version, str) or not SEMVER.match(version):
                self._problem(meta.origin, subject, f"version {version!r} is not a semantic version")
        self._bundles.append((meta.origin, bundle.package, bundle.name))

    def problems(self) -> list[Problem]:
        """Check the rules that need the whole catalog; return every problem, sorted by origin."""
        if self._finished is not None:
            return self._finished
        self._link_channels_and_bundles()
        for name, package in self._packages.items():
            subject = f"{SCHEMA_PACKAGE} name {name!r}"
            # No defaultChannel is served, as upstream's catalogd serves it: resolution never reads
            # it, and only olmctl's listings need one (they say so).
            if package.default_channel and package.default_channel not in package.channels:
                self._problem(
                    package.origin, subject, f"defaultChannel {package.default_channel!r} does not exist"
                )
        for name, (origin, deprecations) in self._deprecations.items():
            self._check_deprecations(name, origin, deprecations)
        if self._dropped:
            self._problems.append(Problem(None, "catalog", f"{self._dropped} more problems not listed"))
        self._finished = sorted(self._problems, key=_order)
        return self._finished

    def _link_channels_and_bundles(self) -> None:
        for origin, package_name, name, entries in self._channels:
            package = self._packages.get(package_name)
            subject = f"{SCHEMA_CHANNEL} package {package_name!r} name {name!r}"
            if package is None:
                self._problem(origin, subject, f"package {package_name!r} does not exist")
            elif name in package.channels:
                self._problem(
                    origin, subject, f"duplicate channel (first defined at {package.channels[name][0]})"
                )
            else:
                package.channels[name] = (origin, entries)
        for origin, package_name, name in self._bundles:
            package = self._packages.get(package_name)
            subject = f"{SCHEMA_BUNDLE} package {package_name!r} name {name!r}"
            if package is None:
                self._problem(origin, subject, f"package {package_name!r} does not exist")
            elif name in package.bundles:
                self._problem(origin, subject, f"duplicate bundle (first defined at {package.bundles[name]})")
            else:
                package.bundles[name] = origin
        for package_name, package in self._packages.items():
            in_channels: set[str] = set()
            for channel, (origin, entries) in package.channels.items():
                in_channels.update(entries)
                missing = sorted({e for e in entries if e and e not in package.bundles})
                if missing:
                    subject = f"{SCHEMA_CHANNEL} package {package_name!r} name {channel!r}"
                    self._problem(
                        origin, subject, f"entries name bundles that do not exist: {', '.join(missing)}"
                    )
            for bundle, origin in package.bundles.items():
                if bundle not in in_channels:
                    subject = f"{SCHEMA_BUNDLE} package {package_name!r} name {bundle!r}"
                    self._problem(origin, subject, "the bundle is not an entry of any channel")

    def _check_deprecations(self, name: str, origin: Origin, deprecations: Deprecations) -> None:
        subject = f"olm.deprecations package {name!r}"
        package = self._packages.get(name)
        if package is None:
            self._problem(origin, subject, f"package {name!r} does not exist")
            return
        for entry in deprecations.entries:
            ref = entry.reference
            known = package.channels if ref.schema_ == SCHEMA_CHANNEL else package.bundles
            if ref.schema_ != SCHEMA_PACKAGE and ref.name not in known:
                self._problem(origin, subject, f"references {ref.schema_} {ref.name!r}, which does not exist")

    def raise_if_invalid(self) -> None:
        problems = self.problems()
        if problems:
            raise InvalidCatalog(problems)


def _order(problem: Problem) -> tuple[int, str, int]:
    if problem.origin is None:
        return (1, "", 0)
    return (0, problem.origin.path, problem.origin.line)


def validate(metas: Iterable[Meta]) -> list[Problem]:
    """Every problem of a catalog, sorted by where it was found; empty when the catalog is valid."""
    validator = Validator()
    for meta in metas:
        validator.add(meta)
    return validator.problems()


def checked(metas: Iterable[Meta]) -> Iterator[Meta]:
    """Pass metas through unchanged; after the last one, raise `InvalidCatalog` if any rule broke.

    Lets a consumer (such as catalogd's storage) stream a catalog to disk and discard what it wrote
    when the catalog turns out invalid, without holding the catalog in memory.
    """
    validator = Validator()
    for meta in metas:
        validator.add(meta)
        yield meta
    validator.raise_if_invalid()
