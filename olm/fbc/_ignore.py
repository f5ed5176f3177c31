"""`.indexignore` files: gitignore-style patterns that keep files out of a catalog.

A `.indexignore` in directory D applies to paths under D, relative to D. As in gitignore:
blank lines and `#` comments are skipped; `!` re-includes; a trailing `/` matches directories only;
a pattern with a `/` elsewhere is anchored to D (`**` spans directories), one without matches a name
at any depth; the last matching pattern decides. A matched directory hides everything below it.
`.indexignore` files themselves are never catalog content.
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase

IGNORE_FILE = ".indexignore"


@dataclass(frozen=True, slots=True)
class _Pattern:
    domain: tuple[str, ...]
    parts: tuple[str, ...]
    anchored: bool
    negate: bool
    dir_only: bool

    def matches(self, path: tuple[str, ...], is_dir: bool) -> bool:
        if path[: len(self.domain)] != self.domain or len(path) == len(self.domain):
            return False
        rel = path[len(self.domain) :]
        if not self.anchored:
            for i, name in enumerate(rel):
                last = i == len(rel) - 1
                if fnmatchcase(name, self.parts[0]) and not (last and self.dir_only and not is_dir):
                    return True
            return False
        for length in range(1, len(rel) + 1):
            whole = length == len(rel)
            if _glob(self.parts, rel[:length]) and not (whole and self.dir_only and not is_dir):
                return True
        return False


def _glob(pattern: tuple[str, ...], path: tuple[str, ...]) -> bool:
    if not pattern:
        return not path
    head, rest = pattern[0], pattern[1:]
    if head == "**":
        return any(_glob(rest, path[i:]) for i in range(len(path) + 1))
    return bool(path) and fnmatchcase(path[0], head) and _glob(rest, path[1:])


def parse_pattern(line: str, domain: tuple[str, ...]) -> _Pattern | None:
    """One line of an ignore file in directory `domain`; `None` for blanks and comments."""
    text = line.strip()
    if not text or text.startswith("#"):
        return None
    negate = text.startswith("!")
    if negate:
        text = text[1:]
    dir_only = text.endswith("/")
    text = text.rstrip("/")
    anchored = "/" in text
    parts = tuple(p for p in text.strip("/").split("/") if p)
    if not parts:
        return None
    return _Pattern(domain=domain, parts=parts, anchored=anchored, negate=negate, dir_only=dir_only)


class IgnoreMatcher:
    """The patterns of every `.indexignore` seen so far, in the order they were added."""

    def __init__(self) -> None:
        self._patterns: list[_Pattern] = []

    def add_file(self, domain: tuple[str, ...], text: str) -> None:
        """Add the patterns of an ignore file found in directory `domain` (path parts from the root)."""
        for line in text.splitlines():
            pattern = parse_pattern(line, domain)
            if pattern is not None:
                self._patterns.append(pattern)

    def ignored(self, path: tuple[str, ...], *, is_dir: bool) -> bool:
        """Whether `path` (parts relative to the catalog root) is excluded."""
        if not is_dir and path and path[-1] == IGNORE_FILE:
            return True
        verdict = False
        for pattern in self._patterns:
            if pattern.matches(path, is_dir):
                verdict = not pattern.negate
        return verdict
