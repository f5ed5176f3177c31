"""Why resolution found no single bundle.

`str(err)` is upstream's message, word for word, for the `Progressing` condition (users, docs and
scripts quote it); `err.explanation` is what this implementation adds (catalog by catalog why
nothing was found, and one `Advice`), which the Event of the same change and `olmctl status` carry.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "AmbiguousCatalogs",
    "InvalidVersionRange",
    "NoBundlesFound",
    "ResolutionError",
    "UnsupportedDependency",
]


class ResolutionError(Exception):
    """No bundle could be chosen; `str(err)` is the message for the `Progressing` condition and
    `explanation` ("" when there is nothing to add) the account that goes beside it."""

    def __init__(self, message: str, explanation: str = "") -> None:
        super().__init__(message)
        self.explanation = explanation


class NoBundlesFound(ResolutionError):
    """No bundle passed every filter (package, range, channels, upgrade edges)."""


class AmbiguousCatalogs(ResolutionError):
    """Catalogs of the same (highest) priority each offer a candidate."""

    def __init__(self, message: str, explanation: str, catalogs: Sequence[str]) -> None:
        super().__init__(message, explanation)
        self.catalogs = tuple(catalogs)


class UnsupportedDependency(ResolutionError):
    """The chosen bundle declares a dependency, which OLM v1 does not resolve."""

    def __init__(self, bundle: str, property_type: str) -> None:
        super().__init__(
            f'validating bundle "{bundle}": bundle "{bundle}" has a dependency declared via property '
            f'"{property_type}" which is currently not supported'
        )
        self.bundle = bundle
        self.property_type = property_type


class InvalidVersionRange(ResolutionError):
    """`spec.source.catalog.version` is not a valid range (the CRD normally rejects it first)."""


def describe(
    *,
    package: str,
    version_range: str,
    channels: Sequence[str],
    installed_version: str | None,
    found: bool = False,
    catalogs: Sequence[str] = (),
) -> str:
    """`[error upgrading from currently installed version "<v>": ](found bundles|no bundles found)
    for package "<p>"[ matching version "<r>"][ in channels [a b]][ in multiple catalogs with the
    same priority [c d]]`."""
    text = "found bundles" if found else "no bundles found"
    text += f' for package "{package}"'
    if version_range:
        text += f' matching version "{version_range}"'
    if channels:
        text += f" in channels [{' '.join(channels)}]"
    if catalogs:
        text += f" in multiple catalogs with the same priority [{' '.join(catalogs)}]"
    if installed_version is not None:
        text = f'error upgrading from currently installed version "{installed_version}": {text}'
    return text
