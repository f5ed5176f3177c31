"""Parsing registry+v1 bundles: layout rules, clear errors for malformed bundles, properties."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from olm import registryv1
from unit import realdata
from unit.pipeline.render import samples


def test_parses_annotations_csv_crds_and_others(tmp_path: Path) -> None:
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg"}, "data": {"a": "b"}}
    root = samples.write(
        tmp_path,
        {
            "csv.yaml": samples.csv(owned=["widgets.example.com"]),
            "crd.yaml": samples.crd(),
            "cm.json": config_map,
        },
    )
    rv1 = registryv1.load_bundle(root)
    assert rv1.package_name == "sample"
    assert rv1.channels == ("stable", "fast")
    assert rv1.default_channel == "stable"
    assert rv1.csv.name == "sample.v1.0.0"
    assert rv1.csv.owned_crds == ("widgets.example.com",)
    assert [c["metadata"]["name"] for c in rv1.crds] == ["widgets.example.com"]
    assert rv1.others == (config_map,)


def test_crds_are_go_normalised(tmp_path: Path) -> None:
    crd = samples.crd()
    crd["metadata"]["creationTimestamp"] = None
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["nullable"] = False
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["x-unknown"] = 1
    rv1 = registryv1.load_bundle(samples.write(tmp_path, {"csv.yaml": samples.csv(), "crd.yaml": crd}))
    [parsed] = rv1.crds
    assert "creationTimestamp" not in parsed["metadata"]
    assert parsed["spec"]["versions"][0]["schema"]["openAPIV3Schema"] == {
        "type": "object",
        "properties": {"spec": {"type": "object"}},
    }
    assert parsed["status"] == {
        "conditions": None,
        "acceptedNames": {"plural": "", "kind": ""},
        "storedVersions": None,
    }


def test_list_objects_are_flattened(tmp_path: Path) -> None:
    items = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"c{i}"}} for i in range(2)]
    root = samples.write(
        tmp_path,
        {"csv.yaml": samples.csv(), "list.yaml": {"apiVersion": "v1", "kind": "List", "items": items}},
    )
    assert [o["metadata"]["name"] for o in registryv1.load_bundle(root).others] == ["c0", "c1"]


def test_multi_document_files(tmp_path: Path) -> None:
    root = samples.write(
        tmp_path, {"all.yaml": [samples.csv(), samples.crd(), samples.crd("gadgets.example.com")]}
    )
    assert len(registryv1.load_bundle(root).crds) == 2


@pytest.mark.parametrize(
    ("manifests", "message"),
    [
        pytest.param({}, 'no ClusterServiceVersion found in "manifests"', id="no-csv-empty"),
        pytest.param(
            {"crd.yaml": samples.crd()}, 'no ClusterServiceVersion found in "manifests"', id="no-csv"
        ),
        pytest.param(
            {"a.yaml": samples.csv(), "b.yaml": samples.csv(name="other.v1")},
            'more than one ClusterServiceVersion found in "manifests": "manifests/a.yaml", '
            '"manifests/b.yaml"',
            id="two-csvs",
        ),
        pytest.param(
            {"csv.yaml": samples.csv(), "bad.yaml": "a: [1, 2\n"},
            'error parsing objects in "manifests/bad.yaml"',
            id="bad-yaml",
        ),
        pytest.param(
            {"csv.yaml": samples.csv(), "nokind.yaml": {"apiVersion": "v1", "metadata": {"name": "x"}}},
            "Object 'Kind' is missing",
            id="missing-kind",
        ),
        pytest.param(
            {"csv.yaml": samples.csv(), "noversion.yaml": {"kind": "ConfigMap", "metadata": {"name": "x"}}},
            "Object 'apiVersion' is missing",
            id="missing-api-version",
        ),
        pytest.param(
            {"csv.yaml": "- just\n- a list\n"}, "a document is not an object", id="document-not-object"
        ),
    ],
)
def test_malformed_manifests(tmp_path: Path, manifests: dict[str, object], message: str) -> None:
    root = samples.write(tmp_path, manifests)
    with pytest.raises(registryv1.BundleError, match=message.replace('"', '"').replace("(", r"\(")):
        registryv1.load_bundle(root)


def test_missing_manifests_directory(tmp_path: Path) -> None:
    (tmp_path / "metadata").mkdir()
    (tmp_path / "metadata" / "annotations.yaml").write_text("annotations: {}\n")
    with pytest.raises(registryv1.BundleError, match='bundle has no "manifests" directory'):
        registryv1.load_bundle(tmp_path)


def test_subdirectories_are_refused(tmp_path: Path) -> None:
    root = samples.write(tmp_path, {"csv.yaml": samples.csv()})
    (root / "manifests" / "nested").mkdir()
    with pytest.raises(
        registryv1.BundleError, match=r'subdirectories are not allowed .* found "manifests/nested"'
    ):
        registryv1.load_bundle(root)
    files = samples.files({"csv.yaml": samples.csv()})
    files["manifests/nested/x.yaml"] = b"kind: ConfigMap\n"
    with pytest.raises(registryv1.BundleError, match="subdirectories are not allowed"):
        registryv1.parse_bundle(files)


def test_missing_annotations(tmp_path: Path) -> None:
    root = samples.write(tmp_path, {"csv.yaml": samples.csv()}, annotations=None)
    with pytest.raises(registryv1.BundleError, match=r"metadata/annotations\.yaml not found in bundle"):
        registryv1.load_bundle(root)


def test_unsupported_media_type(tmp_path: Path) -> None:
    annotations = {"annotations": {"operators.operatorframework.io.bundle.mediatype.v1": "plain+v0"}}
    root = samples.write(tmp_path, {"csv.yaml": samples.csv()}, annotations=annotations)
    with pytest.raises(registryv1.BundleError, match='unsupported bundle media type "plain\\+v0"'):
        registryv1.load_bundle(root)


def test_csv_field_of_wrong_type_names_the_field(tmp_path: Path) -> None:
    csv = samples.csv()
    csv["spec"]["install"]["spec"]["deployments"][0]["spec"]["replicas"] = "two"
    with pytest.raises(
        registryv1.BundleError, match=r"deployments\[0\]\.spec\.replicas: cannot decode string into integer"
    ):
        registryv1.load_bundle(samples.write(tmp_path, {"csv.yaml": csv}))


def test_properties_join_the_olm_properties_annotation(tmp_path: Path) -> None:
    annotations = {"olm.properties": '[{"type":"olm.maxOpenShiftVersion","value":"4.8"}]', "a": "b"}
    properties = {
        "properties": [{"type": "olm.package", "value": {"version": "1.0.0", "packageName": "x<y>"}}]
    }
    root = samples.write(tmp_path, {"csv.yaml": samples.csv(annotations=annotations)}, properties=properties)
    rv1 = registryv1.load_bundle(root)
    assert rv1.properties == ({"type": "olm.package", "value": {"version": "1.0.0", "packageName": "x<y>"}},)
    # Go-marshalled: compact, map keys sorted, HTML characters escaped.
    assert rv1.csv.annotations["olm.properties"] == (
        '[{"type":"olm.maxOpenShiftVersion","value":"4.8"},'
        '{"type":"olm.package","value":{"packageName":"x\\u003cy\\u003e","version":"1.0.0"}}]'
    )
    assert orjson.loads(rv1.csv.annotations["olm.properties"])[1]["value"]["packageName"] == "x<y>"


def test_real_bundle_properties_file() -> None:
    realdata.require()
    rv1 = realdata.load(realdata.FIXTURES / "test-operator" / "v1.2.0")
    props = orjson.loads(rv1.csv.annotations["olm.properties"])
    assert props
    assert all(set(p) == {"type", "value"} for p in props)


@pytest.mark.parametrize("path", realdata.bundle_dirs(), ids=lambda p: f"{p.parent.name}-{p.name}")
def test_every_real_bundle_parses(path: Path) -> None:
    rv1 = realdata.load(path)
    assert rv1.package_name
    assert rv1.csv.name
    assert rv1.csv.deployments
