"""Properties of registry+v1 parsing: generated valid bundles parse to what went in, and any
manifests directory, however broken, yields a bundle or a `BundleError`, nothing else."""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path
from typing import Any

import orjson
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from olm import registryv1
from olm_testkit import bundlefiles as seeds

names = st.from_regex(r"[a-z][a-z0-9-]{0,10}", fullmatch=True)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**31), 2**31) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)
BASE: dict[str, Any] = {
    "metadata/annotations.yaml": yaml.safe_load(seeds.ANNOTATIONS),
    "metadata/properties.yaml": yaml.safe_load(seeds.PROPERTIES),
    "manifests/csv.yaml": yaml.safe_load(seeds.CSV),
    "manifests/crd.json": orjson.loads(seeds.CRD),
    "manifests/list.yaml": yaml.safe_load(seeds.LIST),
}


def configmap(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}


@settings(max_examples=40, deadline=None)
@given(
    package=names,
    channels=st.lists(names, min_size=1, max_size=3, unique=True),
    others=st.lists(names, max_size=5, unique=True),
)
def test_valid_bundles_parse_to_what_went_in(package: str, channels: list[str], others: list[str]) -> None:
    annotations = {
        "annotations": {
            registryv1.bundle.ANNOTATION_PACKAGE: package,
            registryv1.bundle.ANNOTATION_CHANNELS: ",".join(channels),
            registryv1.bundle.ANNOTATION_DEFAULT_CHANNEL: channels[0],
        }
    }
    files = {
        # JSON, which a YAML file may hold: PyYAML writes `n` bare, which Kubernetes reads as false.
        "metadata/annotations.yaml": orjson.dumps(annotations),
        "manifests/csv.yaml": seeds.CSV,
        "manifests/crd.json": seeds.CRD,
        **{f"manifests/{name}.yaml": orjson.dumps(configmap(name)) for name in others},
    }
    bundle = registryv1.parse_bundle(files)
    assert (bundle.package_name, bundle.channels, bundle.default_channel) == (
        package,
        tuple(channels),
        channels[0],
    )
    assert sorted(o["metadata"]["name"] for o in bundle.others) == sorted(others)
    assert [crd["metadata"]["name"] for crd in bundle.crds] == ["ws.example.com"]
    assert bundle.csv.name == "p.v1.0.0"


@st.composite
def mutated(draw: st.DrawFn, value: Any) -> Any:
    """`value` with one subtree (maybe the whole) replaced by an arbitrary JSON value."""
    if draw(st.integers(0, 3)) == 0 or not isinstance(value, dict | list) or not value:
        return draw(json_values)
    if isinstance(value, dict):
        key = draw(st.sampled_from(sorted(value)))
        return {**value, key: draw(mutated(value[key]))}
    index = draw(st.integers(0, len(value) - 1))
    return [*value[:index], draw(mutated(value[index])), *value[index + 1 :]]


@st.composite
def broken_bundles(draw: st.DrawFn) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for path, document in BASE.items():
        how = draw(st.sampled_from(["keep", "mutate", "mutate", "drop", "bytes"]))
        if how == "drop":
            continue
        if how == "bytes":
            files[path] = draw(st.binary(max_size=64))
            continue
        value = draw(mutated(document)) if how == "mutate" else document
        files[path] = orjson.dumps(value) if path.endswith(".json") else yaml.safe_dump(value).encode()
    for extra in draw(
        st.lists(st.sampled_from(["manifests/sub/x.yaml", "manifests/b.yaml", "other/x"]), max_size=2)
    ):
        files[extra] = yaml.safe_dump(draw(json_values)).encode()
    return files


@settings(max_examples=200, deadline=None)
@given(broken_bundles())
@example(
    {
        **{p: orjson.dumps(v) for p, v in BASE.items()},
        "manifests/csv.yaml": b"kind: ClusterServiceVersion\napiVersion: v1\nmetadata: [1]\n",
    }
)
@example({**{p: orjson.dumps(v) for p, v in BASE.items()}, "manifests/crd.json": b"a: !!binary '@@'\n"})
@example(
    {
        **{p: orjson.dumps(v) for p, v in BASE.items()},
        "manifests/csv.yaml": b"kind: ClusterServiceVersion\napiVersion: v1\n"
        b"metadata:\n  annotations:\n    olm.properties: '[1]'\n",
    }
)
def test_any_files_give_a_bundle_or_a_bundle_error(files: dict[str, bytes]) -> None:
    with contextlib.suppress(registryv1.BundleError):
        registryv1.parse_bundle(files)
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        for path, data in files.items():
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_bytes(data)
        with contextlib.suppress(registryv1.BundleError):
            registryv1.load_bundle(root)
