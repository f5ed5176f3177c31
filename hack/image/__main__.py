"""Build the OLM image here and push it: `python -m hack.image [--registry HOST --ca-file F] [--tag T]`.

Without a registry the image is only built (and written out with --oci-dir/--oci-archive); with
--dev-registry it is pushed to the registry `make run` started, if that one is up. Prints the
reference, and the compressed and unpacked size of each layer. --base-oci-dir writes the Debian
base alone, for building the Containerfile from it (docs/dev/image.md).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hack.controlplane import __main__ as controlplane
from olm_testkit import binaries as controlplane_build
from olm_testkit.image import build, oci
from olm_testkit.image.layer import LayerError

DEFAULT_TAG = "dev"


def _mib(size: int) -> str:
    return f"{size / 2**20:7.1f} MiB"


def _print_sizes(local: build.LocalImage) -> None:
    print(f"{'layer':<6} {'compressed':>12} {'unpacked':>12}  digest")
    for name, layer in local.layers.items():
        print(f"{name:<6} {_mib(layer.size):>12} {_mib(layer.unpacked_size):>12}  {layer.digest}")
    print(f"{'total':<6} {_mib(local.compressed_size):>12} {_mib(local.unpacked_size):>12}")


def _print_seconds(seconds: dict[str, float]) -> None:
    print("seconds: " + ", ".join(f"{stage} {value:.1f}" for stage, value in seconds.items()))


def dev_registry() -> tuple[str, Path] | None:
    """Host and CA file of the registry `make run` started, when it is up; None otherwise."""
    registry = controlplane.make_registry(controlplane.make_control_plane(controlplane_build.binary_dir()))
    return (registry.host, registry.ca_file) if registry.running() else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hack.image", description=__doc__)
    parser.add_argument("--registry", help="push to this registry (host:port, TLS)")
    parser.add_argument("--ca-file", type=Path, help="CA bundle that signed the registry's certificate")
    parser.add_argument(
        "--dev-registry", action="store_true", help="push to the `make run` registry if it is up"
    )
    parser.add_argument("--repository", default=build.DEFAULT_REPOSITORY)
    parser.add_argument("--tag", default=DEFAULT_TAG)
    parser.add_argument("--oci-dir", type=Path, help="also write the image into this OCI layout directory")
    parser.add_argument("--oci-archive", type=Path, help="also write the image as this OCI archive (tar)")
    parser.add_argument(
        "--base-oci-dir",
        type=Path,
        help="only write the Debian base (named bookworm-builder, or bookworm with --runtime-base) "
        "into this OCI layout directory",
    )
    parser.add_argument(
        "--runtime-base", action="store_true", help="with --base-oci-dir: the base without the venv module"
    )
    args = parser.parse_args(argv)
    if args.registry and not args.ca_file:
        parser.error("--registry needs --ca-file")
    try:
        if args.base_oci_dir:
            builder = not args.runtime_base
            image = build.base_image(builder=builder)
            name = build.base_ref_name(builder=builder)
            oci.write_layout(image, args.base_oci_dir, ref_name=name)
            size = _mib(len(image.layers[0].data)).strip()
            print(f"oci:{args.base_oci_dir.resolve()}:{name} ({size} compressed)")
            return 0
        target = (args.registry, args.ca_file) if args.registry else None
        if target is None and args.dev_registry:
            target = dev_registry()
            if target is None:
                print("the `make run` registry is not up: building only")
        if target is None:
            local = build.build()
            seconds = local.seconds
        else:
            pushed = build.build_and_push(
                registry_host=target[0], ca_file=target[1], repository=args.repository, tag=args.tag
            )
            local, seconds = pushed.local, pushed.seconds
            print(f"pushed {pushed.reference}\n       {pushed.digest_ref}")
        if args.oci_dir:
            oci.write_layout(local.image, args.oci_dir, ref_name=args.tag)
            print(f"wrote oci:{args.oci_dir.resolve()}:{args.tag}")
        if args.oci_archive:
            oci.write_archive(local.image, args.oci_archive, ref_name=args.tag)
            print(f"wrote oci-archive:{args.oci_archive.resolve()}:{args.tag}")
    except (build.ImageBuildError, LayerError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    _print_sizes(local)
    _print_seconds(seconds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
