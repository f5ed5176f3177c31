"""A package around the real `olm.deprecations` blob of the upstream docs, for the graph's tests."""

from __future__ import annotations

import orjson

from olm import fbc
from olm.pipeline.catalogs import PackageContent, parse_lines
from olm_testkit.images import realdata

GROKSPAWN = realdata.REALDATA / "catalogs" / "upstream-example-deprecations-grokspawn" / "deprecations.yaml"


def mypackage() -> PackageContent:
    """Bundles and channels around the real deprecations blob of the upstream docs (package
    `mypackage`, bundle v0.1.0, channel `early`)."""
    metas: list[dict[str, object]] = [
        {"schema": "olm.package", "name": "mypackage", "defaultChannel": "stable"}
    ]
    for version in ("0.1.0", "0.2.0", "0.3.0", "latest"):
        metas.append(
            {
                "schema": "olm.bundle",
                "name": f"mypackage.v{version}",
                "package": "mypackage",
                "properties": [
                    {"type": "olm.package", "value": {"packageName": "mypackage", "version": version}}
                ],
            }
        )
    metas += [
        {
            "schema": "olm.channel",
            "name": "early",
            "package": "mypackage",
            "entries": [{"name": "mypackage.v0.1.0"}],
        },
        {
            "schema": "olm.channel",
            "name": "stable",
            "package": "mypackage",
            "entries": [
                {"name": "mypackage.v0.1.0"},
                {"name": "mypackage.v0.2.0", "replaces": "mypackage.v0.1.0", "skipRange": "not a range"},
                {"name": "mypackage.v0.3.0", "replaces": "mypackage.v0.2.0", "skipRange": "<0.3.0"},
                {"name": "mypackage.vlatest", "skips": ["mypackage.v0.3.0"]},
            ],
        },
    ]
    # The directory's own .indexignore hides the file from catalog walks: read it as one stream.
    with GROKSPAWN.open("rb") as stream:
        lines = [orjson.dumps(m) for m in metas] + [m.blob for m in fbc.iter_stream(stream, GROKSPAWN.name)]
    return parse_lines("grokspawn", "mypackage", lines)
