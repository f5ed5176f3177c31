"""Fuzz target: a registry+v1 bundle's files (any paths, any bytes) parsed as operator-controller does.

The input is a list of files, each introduced by a line `==> <path>` and followed by its content,
so mutations keep a bundle a bundle while changing paths, YAML, JSON and structure. Promises
checked: `parse_bundle` raises only `BundleError`, and a bundle it accepts has exactly one
ClusterServiceVersion and only CRDs among `crds`.
"""

from __future__ import annotations

from hack.images.realdata import FIXTURE_BUNDLES, REALDATA
from olm import registryv1

MARKER = b"==> "

ANNOTATIONS = b"""annotations:
  operators.operatorframework.io.bundle.mediatype.v1: registry+v1
  operators.operatorframework.io.bundle.package.v1: p
  operators.operatorframework.io.bundle.channels.v1: stable,fast
  operators.operatorframework.io.bundle.channel.default.v1: stable
"""
CSV = b"""apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata:
  name: p.v1.0.0
  annotations:
    olm.properties: '[{"type":"x","value":1}]'
spec:
  version: 1.0.0
  installModes:
  - {type: AllNamespaces, supported: true}
  install:
    strategy: deployment
    spec:
      deployments:
      - name: p
        spec: {selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}}}
      clusterPermissions:
      - serviceAccountName: p
        rules: [{apiGroups: [""], resources: [pods], verbs: [get]}]
"""
CRD = b"""{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
 "metadata": {"name": "ws.example.com"},
 "spec": {"group": "example.com", "names": {"kind": "W", "plural": "ws"}, "scope": "Namespaced",
  "versions": [{"name": "v1", "served": true, "storage": true,
   "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}}
"""
PROPERTIES = (
    b"properties:\n- type: olm.maxOpenShiftVersion\n  value: 4.9\n- {type: olm.gvk, value: {b: 1, a: 2}}\n"
)
LIST = b"apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}\n"


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
