"""Build OLM's release artifacts from HEAD: `python -m hack.release [--image NAME] [--out DIR]`.

HEAD tagged `vX.Y.Z` (or `vX.Y.Z-rc.N`) builds that release, from a clean checkout only and with
its CHANGELOG section; any other commit builds a snapshot of the next release. The artifacts go to
`DIR/<tag>/` (`build/release/` by default): `install.yaml`, `olm-image.oci.tar`, `dist/`,
`NOTES.md` and `SHA256SUMS` (`olm_testkit.release.artifacts`; docs/dev/release.md).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from olm_testkit.release import artifacts

PROJECT_DIR = Path(__file__).resolve().parent.parent
DEFAULT_OUT = PROJECT_DIR / "build" / "release"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hack.release", description=__doc__)
    parser.add_argument(
        "--image",
        help="the image name install.yaml pins the digest to, e.g. registry.example.com/olm-py/olm "
        "(default: the name manifests/ uses)",
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where <tag>/ is written")
    args = parser.parse_args(argv)
    try:
        release = artifacts.make(PROJECT_DIR, args.out, image_name=args.image)
    except artifacts.ReleaseError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    kind = "release" if release.build.tagged else "snapshot"
    print(f"OLM {release.build.tag} ({kind}, version {release.build.python}, commit {release.build.commit})")
    print(f"image   {release.image}")
    print(f"        {release.local.compressed_size / 2**20:.1f} MiB compressed")
    for path in sorted(p for p in release.directory.rglob("*") if p.is_file()):
        print(f"{path.stat().st_size / 2**20:8.2f} MiB  {path.relative_to(release.directory.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
