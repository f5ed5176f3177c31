"""Fuzz target: a registry+v1 bundle's files (any paths, any bytes) parsed as operator-controller does.

The input is a list of files, each introduced by a line `==> <path>` and followed by its content,
so mutations keep a bundle a bundle while changing paths, YAML, JSON and structure. Promises
checked: `parse_bundle` raises only `BundleError`, and a bundle it accepts has exactly one
ClusterServiceVersion and only CRDs among `crds`.
"""

from __future__ import annotations

from olm import registryv1
from olm_testkit.bundlefiles import ANNOTATIONS, CRD, CSV, LIST, PROPERTIES
from olm_testkit.images.realdata import FIXTURE_BUNDLES, REALDATA

MARKER = b"==> "


def encode(files: dict[str, bytes]) -> bytes:
    """The fuzzer's form of a bundle's files."""
    return b"".join(MARKER + path.encode() + b"\n" + data for path, data in files.items())


def decode(data: bytes) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for piece in data.split(MARKER)[1:]:
        path, _, content = piece.partition(b"\n")
        files[path.decode("utf-8", errors="replace")] = content
    return files


def seeds() -> list[bytes]:
    """A small synthetic bundle, its variants, and the smallest real bundles when the data is there."""
    base = {
        "metadata/annotations.yaml": ANNOTATIONS,
        "metadata/properties.yaml": PROPERTIES,
        "manifests/csv.yaml": CSV,
        "manifests/crd.json": CRD,
        "manifests/list.yaml": LIST,
    }
    out = [
        encode(base),
        encode({**base, "manifests/sub/x.yaml": LIST}),
        encode({**base, "manifests/b.yaml": CSV}),
    ]
    for real in (FIXTURE_BUNDLES / "test-operator" / "v1.0.0", "bundles/etcd/0.6.1"):
        root = REALDATA / real
        if root.is_dir():
            files = {
                p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
            }
            out.append(encode(files))
    return out


SEEDS = tuple(seeds())


def one_input(data: bytes) -> None:
    try:
        bundle = registryv1.parse_bundle(decode(data))
    except registryv1.BundleError:
        return
    assert all(crd.get("kind") == "CustomResourceDefinition" for crd in bundle.crds)
    assert all(obj.get("kind") != "ClusterServiceVersion" for obj in bundle.others)
