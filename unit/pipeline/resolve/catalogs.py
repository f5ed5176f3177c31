"""Test helpers: small synthetic package contents, and real ones from `../shared/realdata`."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson
import pytest

from olm import fbc
from olm.pipeline import catalogs

REALDATA = Path(__file__).resolve().parents[3] / ".." / "shared" / "realdata"
COMMUNITY = REALDATA / "catalogs" / "community-operators-prod-v4.20"

Entry = Mapping[str, Any]


def content(
    package: str = "x",
    *,
    channels: Mapping[str, Sequence[Entry]],
    versions: Mapping[str, str] | None = None,
    properties: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
    deprecations: Sequence[tuple[str, str, str]] = (),
) -> catalogs.PackageContent:
    """A package whose bundles are the channels' entries; versions default to the name's `vX.Y.Z`.

    `deprecations` are (schema, name, message) triples.
    """
    names = sorted({str(e["name"]) for entries in channels.values() for e in entries} | set(versions or {}))
    objects: list[dict[str, Any]] = [{"schema": "olm.package", "name": package, "defaultChannel": "stable"}]
    for channel, entries in channels.items():
        objects.append(
            {"schema": "olm.channel", "package": package, "name": channel, "entries": list(entries)}
        )
    for name in names:
        version = (versions or {}).get(name) or name.rpartition(".v")[2]
        props: list[Mapping[str, Any]] = [
            {"type": "olm.package", "value": {"packageName": package, "version": version}}
        ]
        props += list((properties or {}).get(name, ()))
        objects.append(
            {
                "schema": "olm.bundle",
                "package": package,
                "name": name,
                "image": f"registry.example/{package}@sha256:{version}",
                "properties": props,
            }
        )
    if deprecations:
        objects.append(
            {
                "schema": "olm.deprecations",
                "package": package,
                "entries": [
                    {"reference": {"schema": schema, **({"name": name} if name else {})}, "message": message}
                    for schema, name, message in deprecations
                ],
            }
        )
    return catalogs.parse_lines("test", package, [orjson.dumps(o) for o in objects])


def chain(package: str, versions: Iterable[str], **extra: Any) -> list[dict[str, Any]]:
    """Entries where each version replaces the one before."""
    entries: list[dict[str, Any]] = []
    previous = ""
    for version in versions:
        name = f"{package}.v{version}"
        entry: dict[str, Any] = {"name": name, **extra.get(version, {})}
        if previous and "replaces" not in entry:
            entry["replaces"] = previous
        entries.append(entry)
        previous = name
    return entries


@functools.cache
def real(package: str) -> catalogs.PackageContent:
    """The package from the real community catalog, or skip when the data is absent."""
    directory = COMMUNITY / package
    if not directory.is_dir():
        pytest.skip(f"real catalog data not found at {directory.resolve()}")
    lines = [meta.blob for meta in fbc.iter_metas(directory)]
    return catalogs.parse_lines("community", package, lines)
