"""Hostile registry+v1 bundles: each named case with the `BundleError` message a user sees on the
ClusterExtension, or the bundle that is read when the shape is odd but legal."""

from __future__ import annotations

import orjson
import pytest
import yaml

from olm import registryv1
from olm_testkit.bundlefiles import ANNOTATIONS, CRD, CSV, LIST, PROPERTIES

BASE = {"metadata/annotations.yaml": ANNOTATIONS, "manifests/csv.yaml": CSV}
CSV_METADATA = (
    b'metadata:\n  name: p.v1.0.0\n  annotations:\n    olm.properties: \'[{"type":"x","value":1}]\'\n'
)
BILLION_LAUGHS = b"apiVersion: v1\nkind: ConfigMap\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n" + b"".join(
    f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n".encode() for i in range(1, 9)
)


def with_csv(old: bytes, new: bytes, properties: bytes | None = None) -> dict[str, bytes]:
    """The base bundle with part of its CSV replaced, and a properties file when given."""
    assert old in CSV
    files = {**BASE, "manifests/csv.yaml": CSV.replace(old, new)}
    if properties is not None:
        files["metadata/properties.yaml"] = properties
    return files


REFUSED = [
    ("no-annotations-file", {"manifests/csv.yaml": CSV}, "metadata/annotations.yaml not found"),
    ("annotations-a-list", {**BASE, "metadata/annotations.yaml": b"- a\n"}, 'has no "annotations" mapping'),
    (
        "annotations-key-missing",
        {**BASE, "metadata/annotations.yaml": b"other: {}\n"},
        'has no "annotations" mapping',
    ),
    (
        "annotations-invalid-yaml",
        {**BASE, "metadata/annotations.yaml": b"annotations: [\n"},
        "did not find expected",
    ),
    (
        "media-type-not-registry-v1",
        {
            **BASE,
            "metadata/annotations.yaml": b"annotations:\n"
            b"  operators.operatorframework.io.bundle.mediatype.v1: helm\n",
        },
        'unsupported bundle media type "helm"',
    ),
    ("no-manifests", {"metadata/annotations.yaml": ANNOTATIONS}, "no ClusterServiceVersion found"),
    ("two-csvs", {**BASE, "manifests/b.yaml": CSV}, "more than one ClusterServiceVersion"),
    (
        "two-csvs-in-one-file",
        {**BASE, "manifests/csv.yaml": CSV + b"---\n" + CSV},
        "more than one ClusterServiceVersion",
    ),
    ("annotations-file-empty", {**BASE, "metadata/annotations.yaml": b""}, 'has no "annotations" mapping'),
    (
        "properties-file-invalid-yaml",
        {**BASE, "metadata/properties.yaml": b"properties: [\n"},
        "did not find expected",
    ),
    ("manifests-subdirectory", {**BASE, "manifests/sub/x.yaml": LIST}, "subdirectories are not allowed"),
    ("document-not-an-object", {**BASE, "manifests/x.yaml": b"- 1\n"}, "a document is not an object"),
    (
        "object-without-kind",
        {**BASE, "manifests/x.yaml": b"apiVersion: v1\nmetadata: {name: a}\n"},
        "'Kind' is missing",
    ),
    (
        "object-without-apiversion",
        {**BASE, "manifests/x.yaml": b"kind: ConfigMap\n"},
        "'apiVersion' is missing",
    ),
    (
        "list-item-a-scalar",
        {**BASE, "manifests/x.yaml": b"apiVersion: v1\nkind: List\nitems: [1]\n"},
        "'Kind' is missing",
    ),
    (
        "manifest-invalid-yaml",
        {**BASE, "manifests/x.yaml": b"kind: [\n"},
        'error parsing objects in "manifests/x.yaml"',
    ),
    ("manifest-invalid-utf8", {**BASE, "manifests/x.yaml": b"kind: \xff\n"}, "can't decode byte 0xff"),
    ("manifest-billion-laughs", {**BASE, "manifests/x.yaml": BILLION_LAUGHS}, "excessive aliasing"),
    (
        "manifest-anchor-holding-its-own-alias",
        {**BASE, "manifests/x.yaml": b"apiVersion: v1\nkind: ConfigMap\na: &a [*a]\n"},
        "contains an alias of itself",
    ),
    (
        "manifest-bad-base64-binary",
        {**BASE, "manifests/x.yaml": b"apiVersion: v1\nkind: Secret\ndata: !!binary 'a'\n"},
        "failed to decode base64",
    ),
    (
        "csv-metadata-a-list",
        with_csv(CSV_METADATA, b"metadata: [1]\n"),
        "metadata: cannot decode into object",
    ),
    (
        "csv-metadata-a-list-with-bundle-properties",
        with_csv(CSV_METADATA, b"metadata: [1]\n", properties=PROPERTIES),
        "its metadata and annotations must be objects",
    ),
    (
        "csv-olm-properties-not-json",
        with_csv(b'\'[{"type":"x","value":1}]\'', b"'not json'", properties=PROPERTIES),
        "failed to unmarshal csv.metadata.annotations['olm.properties']",
    ),
    (
        "csv-olm-properties-not-objects",
        with_csv(b'\'[{"type":"x","value":1}]\'', b"'[1, 2]'", properties=PROPERTIES),
        "not a list of objects",
    ),
    (
        "csv-spec-a-number",
        {**BASE, "manifests/csv.yaml": CSV.split(b"spec:")[0] + b"spec: 5\n"},
        "spec: cannot decode into object",
    ),
    (
        "csv-install-modes-an-object",
        with_csv(b"  - {type: AllNamespaces, supported: true}\n", b"    nope: 1\n"),
        "spec.installModes: cannot decode into array",
    ),
    (
        "csv-deployment-spec-a-list",
        with_csv(
            b"spec: {selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}}}", b"spec: [1]"
        ),
        "spec.install.spec.deployments[0].spec: cannot decode array into object",
    ),
    (
        "properties-file-not-a-list",
        {**BASE, "metadata/properties.yaml": b"properties: {a: 1}\n"},
        "must be a list of objects",
    ),
    (
        "properties-items-not-objects",
        {**BASE, "metadata/properties.yaml": b"properties: [1]\n"},
        "must be a list of objects",
    ),
    (
        "crd-versions-a-number",
        {
            **BASE,
            "manifests/crd.yaml": b"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
            b"metadata: {name: a.b}\nspec: {versions: 5}\n",
        },
        ".spec.versions: cannot decode number into array",
    ),
]

ACCEPTED = [
    ("minimal", BASE, (0, 0)),
    (
        "crd-list-and-properties",
        {
            **BASE,
            "manifests/crd.json": CRD,
            "manifests/list.yaml": LIST,
            "metadata/properties.yaml": PROPERTIES,
        },
        (1, 1),
    ),
    ("empty-manifest-file", {**BASE, "manifests/empty.yaml": b""}, (0, 0)),
    ("manifest-of-only-comments", {**BASE, "manifests/c.yaml": b"# nothing\n---\n"}, (0, 0)),
    (
        "crd-inside-a-list",
        {**BASE, "manifests/l.json": b'{"apiVersion":"v1","kind":"List","items":[' + CRD + b"]}"},
        (1, 0),
    ),
    (
        "annotations-with-null-values",
        {
            **BASE,
            "metadata/annotations.yaml": b"annotations:\n  a: null\n"
            b"  operators.operatorframework.io.bundle.package.v1: p\n",
        },
        (0, 0),
    ),
    ("properties-file-empty", {**BASE, "metadata/properties.yaml": b""}, (0, 0)),
    ("csv-written-as-json", {**BASE, "manifests/csv.yaml": orjson.dumps(yaml.safe_load(CSV))}, (0, 0)),
    (
        "files-outside-manifests-and-metadata-ignored",
        {**BASE, "root.txt": b"\xff\xfe", "other/x.yaml": b"[["},
        (0, 0),
    ),
]

CASES = len(REFUSED) + len(ACCEPTED)


@pytest.mark.parametrize(("files", "message"), [pytest.param(f, m, id=i) for i, f, m in REFUSED])
def test_refused(files: dict[str, bytes], message: str) -> None:
    with pytest.raises(registryv1.BundleError) as caught:
        registryv1.parse_bundle(files)
    assert message in str(caught.value)


@pytest.mark.parametrize(("files", "counts"), [pytest.param(f, c, id=i) for i, f, c in ACCEPTED])
def test_accepted(files: dict[str, bytes], counts: tuple[int, int]) -> None:
    bundle = registryv1.parse_bundle(files)
    assert (len(bundle.crds), len(bundle.others)) == counts
    assert bundle.csv.name == "p.v1.0.0"
