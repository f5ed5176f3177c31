"""Generate large, valid File-Based Catalogs, and measure what reading one costs.

Used by the streaming tests (small sizes) and runnable to measure peak RSS and throughput:

    uv run --frozen python -m unit.fbc.bigcatalog --megabytes 120 [--format yaml] [--store]

prints the catalog size, the time to parse and validate it, and the process's peak RSS.
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def _bundle(package: str, index: int, payload: int, rng: random.Random) -> dict[str, Any]:
    name = f"{package}.v1.{index}.0"
    blob = base64.b64encode(rng.randbytes(payload * 3 // 4)).decode()
    return {
        "schema": "olm.bundle",
        "name": name,
        "package": package,
        "image": f"quay.io/example/{package}-bundle@sha256:{index:064x}",
        "properties": [
            {"type": "olm.package", "value": {"packageName": package, "version": f"1.{index}.0"}},
            {"type": "olm.gvk", "value": {"group": "example.com", "kind": "Thing", "version": "v1"}},
            {"type": "olm.bundle.object", "value": {"data": blob}},
        ],
    }


def write_catalog(
    root: Path,
    *,
    packages: int,
    bundles_per_package: int,
    bundle_bytes: int,
    fmt: str = "json",
    seed: int = 1,
) -> int:
    """Write one file per package under `root`; return the total bytes written."""
    rng = random.Random(seed)
    total = 0
    for p in range(packages):
        package = f"pkg-{p:05d}"
        names = [f"{package}.v1.{i}.0" for i in range(bundles_per_package)]
        objects: list[dict[str, Any]] = [
            {"schema": "olm.package", "name": package, "defaultChannel": "stable"},
            {
                "schema": "olm.channel",
                "package": package,
                "name": "stable",
                "entries": [
                    {"name": n, **({"replaces": names[i - 1]} if i else {})} for i, n in enumerate(names)
                ],
            },
            *(_bundle(package, i, bundle_bytes, rng) for i in range(bundles_per_package)),
        ]
        directory = root / package
        directory.mkdir(parents=True, exist_ok=True)
        if fmt == "json":
            text = "".join(json.dumps(o, indent=1) + "\n" for o in objects)
            path = directory / "catalog.json"
        else:
            import yaml  # noqa: PLC0415

            text = yaml.safe_dump_all(objects, sort_keys=False)
            path = directory / "catalog.yaml"
        path.write_text(text)
        total += len(text)
    return total


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=int, default=120)
    parser.add_argument("--bundles-per-package", type=int, default=50)
    parser.add_argument("--bundle-bytes", type=int, default=20_000)
    parser.add_argument("--format", choices=("json", "yaml"), default="json")
    parser.add_argument(
        "--store", action="store_true", help="also write catalogd storage (JSONL, gzip, index)"
    )
    args = parser.parse_args()

    from olm import fbc  # noqa: PLC0415

    per_package = args.bundles_per_package * (args.bundle_bytes + 600)
    packages = max(1, args.megabytes * 1_000_000 // per_package)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "catalog"
        size = write_catalog(
            root,
            packages=packages,
            bundles_per_package=args.bundles_per_package,
            bundle_bytes=args.bundle_bytes,
            fmt=args.format,
        )
        baseline = _peak_rss_mib()
        started = time.monotonic()
        if args.store:
            import asyncio  # noqa: PLC0415

            from olm.catalogd.storage import Storage  # noqa: PLC0415

            storage = Storage(Path(tmp) / "store")
            stored = asyncio.run(
                storage.store("big", "sha256:" + "0" * 64, fbc.checked(fbc.iter_metas(root)))
            )
            count = stored.count
        else:
            count = sum(1 for _ in fbc.checked(fbc.iter_metas(root)))
        elapsed = time.monotonic() - started
        print(
            f"format={args.format} catalog={size / 1e6:.1f} MB metas={count} packages={packages} "
            f"seconds={elapsed:.2f} throughput={size / 1e6 / elapsed:.1f} MB/s "
            f"peak_rss_before={baseline:.1f} MiB peak_rss_after={_peak_rss_mib():.1f} MiB store={args.store}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
