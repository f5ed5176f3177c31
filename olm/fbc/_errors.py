"""What can be wrong with a catalog: unreadable files, and content that breaks the FBC rules."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from olm.fbc._meta import Origin

MAX_LISTED_PROBLEMS = 10
"""How many problems an `InvalidCatalog` message spells out; the rest are counted."""


class CatalogError(Exception):
    """Base of every error this package raises about catalog content."""


class ParseError(CatalogError):
    """A file could not be read as a stream of JSON or YAML objects."""

    def __init__(self, path: str, line: int | None, message: str) -> None:
        self.path = path
        self.line = line
        self.message = message
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {message}")


class ShapeError(CatalogError):
    """An object of a schema OLM interprets has a field of the wrong type, or lacks a required one.

    `location` is the path to the field as the catalog spells it (`entries.0.name`), empty for the
    object itself; `message` says what was expected.
    """

    def __init__(self, location: str, message: str) -> None:
        self.location = location
        self.message = message
        super().__init__(f"{location or 'object'}: {message}")


@dataclass(frozen=True, slots=True)
class Problem:
    """One broken rule, naming the object (schema, package, name) and where it was read."""

    origin: Origin | None
    subject: str
    message: str

    def __str__(self) -> str:
        where = f"{self.origin}: " if self.origin is not None else ""
        return f"{where}{self.subject}: {self.message}"


class InvalidCatalog(CatalogError):
    """The catalog parsed, but its objects break the rules; `problems` lists them in file order."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = tuple(problems)
        shown = [str(p) for p in self.problems[:MAX_LISTED_PROBLEMS]]
        more = len(self.problems) - len(shown)
        if more > 0:
            shown.append(f"... and {more} more")
        noun = "problem" if len(self.problems) == 1 else "problems"
        super().__init__(f"invalid catalog ({len(self.problems)} {noun}): " + "; ".join(shown))
