"""Properties of catalog parsing over generated catalogs: one model whatever the encoding, and
nothing but `ParseError` out of any bytes."""

from __future__ import annotations

import base64
import io
import json
from typing import Any

import orjson
from hypothesis import example, given, settings
from hypothesis import strategies as st

from olm import fbc

# BMP text (utf-8 excludes surrogates): a JSON `\u` escape of anything else is a surrogate pair, which
# YAML's double-quoted style reads as two lone surrogates, not one character.
texts = st.text(st.characters(codec="utf-8", max_codepoint=0xFFFF), max_size=12)
names = st.from_regex(r"[a-z][a-z0-9-]{0,10}", fullmatch=True)
versions = st.builds(
    lambda a, b, c, pre: f"{a}.{b}.{c}" + (f"-{pre}" if pre else ""),
    *(st.integers(0, 20) for _ in range(3)),
    st.sampled_from(["", "rc.1", "alpha", "0.3.a"]),
)
scalars = (
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | texts | st.floats(-1e6, 1e6, allow_nan=False)
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=8,
)
extras = st.dictionaries(names.map(lambda n: f"x-{n}"), json_values, max_size=2)


def csv_metadata(draw: st.DrawFn) -> dict[str, Any]:
    return {
        "type": "olm.csv.metadata",
        "value": {
            "displayName": draw(texts),
            "keywords": draw(st.lists(texts, max_size=3)),
            "installModes": [{"type": "AllNamespaces", "supported": draw(st.booleans())}],
            "annotations": draw(st.dictionaries(names, texts, max_size=2)),
        },
    }


def bundle_object(draw: st.DrawFn) -> dict[str, Any]:
    manifest = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": draw(names)},
        "data": draw(extras),
    }
    return {"type": "olm.bundle.object", "value": {"data": base64.b64encode(orjson.dumps(manifest)).decode()}}


@st.composite
def catalogs(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A valid catalog: packages, each with channels over its bundles, in either bundle encoding."""
    documents: list[dict[str, Any]] = []
    for package in draw(st.lists(names, min_size=1, max_size=3, unique=True)):
        bundle_versions = draw(st.lists(versions, min_size=1, max_size=3, unique=True))
        bundles = [f"{package}.v{v}" for v in bundle_versions]
        documents.append(
            {"schema": "olm.package", "name": package, "defaultChannel": "stable", "description": draw(texts)}
        )
        documents.append(
            {
                "schema": "olm.channel",
                "package": package,
                "name": "stable",
                "entries": [
                    {"name": b, **({"replaces": bundles[i - 1]} if i else {})} for i, b in enumerate(bundles)
                ],
            }
        )
        for name, version in zip(bundles, bundle_versions, strict=True):
            encoding = draw(st.sampled_from([csv_metadata, bundle_object]))
            properties = [
                {"type": "olm.package", "value": {"packageName": package, "version": version}},
                encoding(draw),
            ]
            documents.append(
                {
                    "schema": "olm.bundle",
                    "package": package,
                    "name": name,
                    "image": f"registry.test/{package}@sha256:{'0' * 64}",
                    "properties": properties,
                    **draw(extras),
                }
            )
    return documents


def as_yaml(value: Any, indent: str = "") -> str:
    """Block-style YAML with every string double-quoted (JSON escapes), so no scalar's type is up
    to the reader's implicit typing."""
    if isinstance(value, dict) and value:
        return "".join(f"\n{indent}{json.dumps(k)}:{as_yaml(v, indent + '  ')}" for k, v in value.items())
    if isinstance(value, list) and value:
        return "".join(f"\n{indent}-{as_yaml(v, indent + '  ')}" for v in value)
    return " " + json.dumps(value)


def encodings(documents: list[dict[str, Any]]) -> dict[str, bytes]:
    return {
        "json-lines": b"\n".join(orjson.dumps(d) for d in documents),
        "json-pretty": "".join(json.dumps(d, indent=2, ensure_ascii=False) for d in documents).encode(),
        "yaml": "".join("---" + as_yaml(d) + "\n" for d in documents).encode(),
    }


def model(data: bytes) -> list[tuple[str, str, str, Any, Any]]:
    metas = list(fbc.iter_stream(io.BytesIO(data), "catalog"))
    return [(m.schema, m.package, m.name, orjson.loads(m.blob), fbc.view(m)) for m in metas]


@settings(max_examples=30, deadline=None)
@given(catalogs())
def test_json_and_yaml_streams_read_as_one_model(documents: list[dict[str, Any]]) -> None:
    models = {name: model(data) for name, data in encodings(documents).items()}
    assert models["json-lines"] == models["json-pretty"] == models["yaml"]
    assert [value for _, _, _, value, _ in models["yaml"]] == documents


@settings(max_examples=40, deadline=None)
@given(catalogs())
def test_generated_catalogs_are_valid(documents: list[dict[str, Any]]) -> None:
    data = encodings(documents)["yaml"]
    assert fbc.validate(fbc.iter_stream(io.BytesIO(data), "catalog")) == []


@settings(max_examples=40, deadline=None)
@given(catalogs())
def test_served_blobs_read_back_as_the_same_metas(documents: list[dict[str, Any]]) -> None:
    for meta in fbc.iter_stream(io.BytesIO(encodings(documents)["yaml"]), "catalog"):
        (again,) = fbc.iter_stream(io.BytesIO(meta.blob), "blob")
        assert (again.schema, again.package, again.name, again.blob) == (
            meta.schema,
            meta.package,
            meta.name,
            meta.blob,
        )


FRAGMENTS = [
    "schema: x\n",
    "---\n",
    "{",
    "}",
    "[",
    "&a ",
    "*a",
    "!!binary ",
    "<<: ",
    ": ",
    "- ",
    '"',
    "\0",
    "\t",
]


@settings(max_examples=300, deadline=None)
@given(
    st.binary(max_size=200) | st.lists(st.sampled_from(FRAGMENTS), max_size=20).map("".join).map(str.encode)
)
@example(b"schema: x\na: !!binary '@@'\n")  # bad base64 is a YAML error, not a binascii.Error
@example(b"schema: x\na: &a [1, *a]\n")  # an anchor holding its own alias
@example(
    b"schema: x\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
    + b"".join(f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n".encode() for i in range(1, 9))
)  # a "billion laughs": 10^9 nodes from 600 bytes
def test_any_bytes_parse_or_raise_parse_error(data: bytes) -> None:
    try:
        metas = list(fbc.iter_stream(io.BytesIO(data), "catalog.yaml", max_object_bytes=1 << 16))
    except fbc.ParseError as error:
        failed_in = error.path
    else:
        fbc.validate(metas)
        return
    assert failed_in == "catalog.yaml"
