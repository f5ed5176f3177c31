"""Build and push catalog or bundle images: `python -m hack.images catalog|bundle DIR REF --ca-file F`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from olm_testkit.images.layout import bundle_image, catalog_image
from olm_testkit.images.registry import Reference, RegistryClient, RegistryError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hack.images", description=__doc__)
    parser.add_argument(
        "kind", choices=("catalog", "bundle"), help="catalog: FBC directory; bundle: registry+v1"
    )
    parser.add_argument("directory", type=Path)
    parser.add_argument("reference", help="host:port/repository:tag")
    parser.add_argument(
        "--ca-file", type=Path, required=True, help="CA bundle that signed the registry's certificate"
    )
    args = parser.parse_args(argv)
    try:
        image = catalog_image(args.directory) if args.kind == "catalog" else bundle_image(args.directory)
        reference = Reference.parse(args.reference)
        digest = RegistryClient(host=reference.host, ca_file=args.ca_file).push(image, reference)
    except (ValueError, OSError, RegistryError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    print(f"{reference.host}/{reference.repository}@{digest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
