"""The rules a catalog must follow to be served, checked in one streaming pass.

`Validator` looks at each meta as it goes by and keeps only its identity (schema, package, name)
and origin, so validating a catalog of hundreds of megabytes costs memory in proportion to its
number of objects, not its size, and it never decodes an object a second time.

The rules are upstream catalogd's (which serves whatever parses as a stream of objects whose
`schema`, `package` and `name` are strings, see `_walk.to_meta`) plus the few that keep objects
addressable, each kept because upstream misbehaves without it (docs/compat/catalog-rules.md):

- every object has a non-empty `schema` (checked while reading, `_walk.to_meta`): upstream's own
  loader refuses a schema-less object, so its resolver could then read nothing of that package;
- an `olm.package`, `olm.channel` or `olm.bundle` has a non-empty `name`, and no two share their
  schema, package and name; a package has at most one `olm.deprecations`: upstream's resolver
  files one object per (package, schema, name) and silently keeps only the last of duplicates.

Everything else is left to the reader, as upstream leaves it: the shape of the four schemas OLM
interprets (a malformed object makes its package unreadable from this catalog at resolution, not
the catalog unservable), a `defaultChannel` naming no channel, objects of a package the catalog
does not declare, channel entries naming bundles that are not there, bundles in no channel, and
the `olm.package` property (a bundle without a semantic version is skipped by resolution).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from olm.fbc._errors import InvalidCatalog, Problem
from olm.fbc._meta import SCHEMA_BUNDLE, SCHEMA_CHANNEL, SCHEMA_DEPRECATIONS, SCHEMA_PACKAGE, Meta, Origin

MAX_PROBLEMS = 1000
"""Problems kept per validation; a catalog this broken gains nothing from a longer list."""

SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
)
"""Semantic Versioning 2.0.0, exactly (no leading `v`, no missing parts): what a bundle's
`olm.package` version must be for resolution to consider the bundle."""

NAMED_SCHEMAS = (SCHEMA_PACKAGE, SCHEMA_CHANNEL, SCHEMA_BUNDLE)
"""The schemas whose objects must be named, uniquely within their package."""

_NOUNS = {SCHEMA_PACKAGE: "package", SCHEMA_CHANNEL: "channel", SCHEMA_BUNDLE: "bundle"}


class Validator:
    """Feed every meta to `add`, then call `problems()` (or `raise_if_invalid()`) once."""

    def __init__(self) -> None:
        self._problems: list[Problem] = []
        self._dropped = 0
        self._seen: dict[tuple[str, str, str], Origin] = {}
        """(schema, package, name) -> where it was first defined."""
        self._finished: list[Problem] | None = None

    def _problem(self, origin: Origin | None, subject: str, message: str) -> None:
        if len(self._problems) < MAX_PROBLEMS:
            self._problems.append(Problem(origin, subject, message))
        else:
            self._dropped += 1

    def add(self, meta: Meta) -> None:
        if meta.schema in NAMED_SCHEMAS:
            if not meta.name:
                self._problem(meta.origin, meta.describe(), "name must be set")
                return
            key = (meta.schema, meta.package, meta.name)
            duplicate = f"duplicate {_NOUNS[meta.schema]}"
        elif meta.schema == SCHEMA_DEPRECATIONS:
            key = (meta.schema, meta.package, "")
            duplicate = "second olm.deprecations for the package"
        else:
            return
        first = self._seen.get(key)
        if first is None:
            self._seen[key] = meta.origin
        else:
            self._problem(meta.origin, meta.describe(), f"{duplicate} (first defined at {first})")

    def problems(self) -> list[Problem]:
        """Every problem, sorted by origin."""
        if self._finished is not None:
            return self._finished
        if self._dropped:
            self._problems.append(Problem(None, "catalog", f"{self._dropped} more problems not listed"))
        self._finished = sorted(self._problems, key=_order)
        return self._finished

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
