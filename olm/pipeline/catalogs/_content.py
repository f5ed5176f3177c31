"""One package's slice of a catalog, as the resolver reads it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import orjson

from olm import fbc
from olm.pipeline.catalogs._errors import MalformedCatalog

__all__ = ["PackageContent", "parse_lines"]


@dataclass(frozen=True, kw_only=True)
class PackageContent:
    """Every meta of one package in one catalog version, typed; empty when the catalog lacks it.

    `deprecations` is the package's `olm.deprecations` object (a valid catalog has at most one).
    """

    name: str
    package: fbc.Package | None = None
    channels: tuple[fbc.Channel, ...] = ()
    bundles: tuple[fbc.Bundle, ...] = ()
    deprecations: fbc.Deprecations | None = None

    @property
    def empty(self) -> bool:
        """True when the catalog holds nothing of the package."""
        return self.package is None and not self.channels and not self.bundles


def wanted(obj: dict[str, object], package: str) -> bool:
    """Whether a decoded meta belongs to `package` (the `olm.package` names itself in `name`)."""
    if obj.get("schema") == fbc.SCHEMA_PACKAGE:
        return obj.get("name") == package
    return obj.get("package") == package


CSV_METADATA = "olm.csv.metadata"
"""Kept, when its type is wanted, with only the field a reader uses: `minKubeVersion`. An
`olm.bundle.object` CSV (older catalogs) is kept as such a property when it declares one."""


def _only(properties: object, types: frozenset[str]) -> object:
    """The properties of `types`; anything but a list is left for validation to report."""
    if not isinstance(properties, list):
        return properties
    kept = [_slim(p) for p in properties if not isinstance(p, dict) or p.get("type") in types]
    if CSV_METADATA in types:
        kept += [m for p in properties if (m := _embedded_minimum(p)) is not None]
    return kept


def _embedded_minimum(prop: object) -> dict[str, object] | None:
    if not isinstance(prop, dict) or prop.get("type") != fbc.PROPERTY_BUNDLE_OBJECT:
        return None
    csv = fbc.embedded_csv(prop.get("value"))
    spec = csv.get("spec") if csv is not None else None
    minimum = spec.get("minKubeVersion") if isinstance(spec, dict) else None
    return {"type": CSV_METADATA, "value": {"minKubeVersion": minimum}} if minimum else None


def _slim(prop: object) -> object:
    if isinstance(prop, dict) and prop.get("type") == CSV_METADATA and isinstance(prop.get("value"), dict):
        minimum = prop["value"].get("minKubeVersion")
        return {"type": CSV_METADATA, "value": {"minKubeVersion": minimum} if minimum else {}}
    return prop


def parse_lines(
    catalog: str, package: str, lines: Iterable[bytes], *, bundle_properties: frozenset[str] | None = None
) -> PackageContent:
    """Build the content of `package` from JSONL lines; lines of other packages are ignored.

    `bundle_properties`, when given, are the only property types bundles keep: a process that
    holds packages for a long time keeps what its reader uses (`olm.csv.metadata`, with
    descriptions and icons, is most of a catalog's bytes). None keeps every property.

    Raises `MalformedCatalog` naming the catalog when a line is not JSON or a known schema has
    the wrong shape.
    """
    packages: list[fbc.Package] = []
    channels: list[fbc.Channel] = []
    bundles: list[fbc.Bundle] = []
    deprecations: list[fbc.Deprecations] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError as err:
            raise MalformedCatalog(catalog, f"line {number} is not JSON: {err}") from None
        if not isinstance(obj, dict):
            raise MalformedCatalog(catalog, f"line {number} is not a JSON object")
        if not wanted(obj, package):
            continue
        schema = obj.get("schema")
        try:
            if schema == fbc.SCHEMA_PACKAGE:
                packages.append(fbc.Package.parse(obj))
            elif schema == fbc.SCHEMA_CHANNEL:
                channels.append(fbc.Channel.parse(obj))
            elif schema == fbc.SCHEMA_BUNDLE:
                if bundle_properties is not None:
                    obj["properties"] = _only(obj.get("properties"), bundle_properties)
                bundles.append(fbc.Bundle.parse(obj))
            elif schema == fbc.SCHEMA_DEPRECATIONS:
                deprecations.append(fbc.Deprecations.parse(obj))
        except fbc.ShapeError as err:
            raise MalformedCatalog(
                catalog, f"{schema} {obj.get('name', '')!r} of package {package!r}: {err}"
            ) from None
    if len(packages) > 1:
        raise MalformedCatalog(catalog, f"package {package!r} is declared {len(packages)} times")
    if len(deprecations) > 1:
        raise MalformedCatalog(
            catalog, f"package {package!r} has {len(deprecations)} olm.deprecations objects"
        )
    return PackageContent(
        name=package,
        package=packages[0] if packages else None,
        channels=tuple(channels),
        bundles=tuple(bundles),
        deprecations=deprecations[0] if deprecations else None,
    )
