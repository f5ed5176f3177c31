"""Catalog files of every shape become metas; broken ones become errors naming file and line."""

from __future__ import annotations

import io
import json
from pathlib import Path

import orjson
import pytest

from olm import fbc
from olm.fbc import _jsonstream

PKG = {"schema": "olm.package", "name": "p", "defaultChannel": "stable"}
CHANNEL = {"schema": "olm.channel", "package": "p", "name": "stable", "entries": [{"name": "p.v1"}]}


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def metas(root: Path) -> list[tuple[str, str, str, str]]:
    return [(m.schema, m.package, m.name, str(m.origin)) for m in fbc.iter_metas(root)]


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(json.dumps(PKG) + "\n" + json.dumps(CHANNEL) + "\n", id="jsonl"),
        pytest.param(json.dumps(PKG, indent=4) + "\n" + json.dumps(CHANNEL, indent=2), id="pretty-printed"),
        pytest.param(json.dumps(PKG) + json.dumps(CHANNEL), id="no-separator"),
        pytest.param(
            "\n\n  " + json.dumps(PKG) + "\r\n\t" + json.dumps(CHANNEL) + "\n\n", id="odd-whitespace"
        ),
        pytest.param(
            "schema: olm.package\nname: p\ndefaultChannel: stable\n---\n"
            "schema: olm.channel\npackage: p\nname: stable\nentries:\n- name: p.v1\n",
            id="yaml-documents",
        ),
        pytest.param(
            "---\n# leading comment\nschema: olm.package\nname: p\ndefaultChannel: stable\n---\n---\n"
            "schema: olm.channel\npackage: p\nname: stable\nentries: [{name: p.v1}]\n...\n",
            id="yaml-empty-documents-and-end-markers",
        ),
    ],
)
def test_stream_shapes(tmp_path: Path, text: str) -> None:
    write(tmp_path, {"catalog": text})
    found = list(fbc.iter_metas(tmp_path))
    assert [(m.schema, m.package, m.name) for m in found] == [
        ("olm.package", "", "p"),
        ("olm.channel", "p", "stable"),
    ]
    assert [orjson.loads(m.blob) for m in found] == [PKG, CHANNEL]
    assert all(b"\n" not in m.blob for m in found)


def test_json_strings_may_hold_braces_quotes_and_escapes(tmp_path: Path) -> None:
    tricky = {"schema": "x.other", "name": 'a "} {" \\ b', "value": "}}}{{{", "nested": {"k": ["{", "}"]}}
    write(tmp_path, {"a.json": json.dumps(tricky, indent=1) + json.dumps(PKG)})
    found = list(fbc.iter_metas(tmp_path))
    assert [orjson.loads(m.blob) for m in found] == [tricky, PKG]


def test_objects_larger_than_a_read_chunk(tmp_path: Path) -> None:
    big = {"schema": "olm.bundle", "name": "b", "data": "x" * (3 * _jsonstream.CHUNK_SIZE + 17)}
    write(tmp_path, {"a.json": json.dumps(big) + json.dumps(PKG, indent=2)})
    found = list(fbc.iter_metas(tmp_path))
    assert [m.name for m in found] == ["b", "p"]
    assert orjson.loads(found[0].blob) == big
    assert found[1].origin.line == 1  # the second object starts on the first line too


def test_line_numbers_point_at_each_object(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "a.json": json.dumps(PKG, indent=2) + "\n" + json.dumps(CHANNEL),
            "b.yaml": "# c\n---\nschema: s\nname: why\n",
        },
    )
    assert [str(m.origin) for m in fbc.iter_metas(tmp_path)] == ["a.json:1", "a.json:6", "b.yaml:3"]


def test_any_layout_in_lexical_order(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "z/deep/er/catalog.yaml": "schema: olm.package\nname: z\n",
            "a.json": '{"schema":"olm.package","name":"a"}',
            "m/index.yml": "schema: olm.package\nname: m\n",
            "b": '{"schema":"olm.package","name":"b"}',
        },
    )
    assert [name for _, _, name, _ in metas(tmp_path)] == ["a", "b", "m", "z"]


@pytest.mark.parametrize(
    ("ignore", "expected"),
    [
        pytest.param("", ["a", "b", "c", "d", "e"], id="nothing-ignored"),
        pytest.param("b.json\n", ["a", "c", "d", "e"], id="name-anywhere"),
        pytest.param("*.yaml\n", ["a", "b", "d"], id="glob"),
        pytest.param("sub/\n", ["a", "b", "c"], id="directory"),
        pytest.param("/c.yaml\n", ["a", "b", "d", "e"], id="anchored-only-at-top"),
        pytest.param("sub/**/e.yaml\n", ["a", "b", "c", "d"], id="double-star"),
        pytest.param("*\n!a.json\n", ["a"], id="negation"),
        pytest.param("# comment\n\n  \n", ["a", "b", "c", "d", "e"], id="comments-and-blanks"),
    ],
)
def test_indexignore(tmp_path: Path, ignore: str, expected: list[str]) -> None:
    write(
        tmp_path,
        {
            ".indexignore": ignore,
            "a.json": '{"schema":"s","name":"a"}',
            "b.json": '{"schema":"s","name":"b"}',
            "c.yaml": "schema: s\nname: c\n",
            "sub/d.json": '{"schema":"s","name":"d"}',
            "sub/x/c.yaml": "schema: s\nname: e\n",
        },
    )
    (tmp_path / "sub" / "x" / "c.yaml").rename(tmp_path / "sub" / "x" / "e.yaml")
    assert [name for _, _, name, _ in metas(tmp_path)] == expected


def test_nested_indexignore_applies_below_its_directory_only(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "a.json": '{"schema":"s","name":"a"}',
            "sub/.indexignore": "a.json\n",
            "sub/a.json": '{"schema":"s","name":"sub-a"}',
            "sub/b.json": '{"schema":"s","name":"sub-b"}',
        },
    )
    assert [name for _, _, name, _ in metas(tmp_path)] == ["a", "sub-b"]


def test_symlinks_inside_are_followed_once_and_outside_skipped(tmp_path: Path) -> None:
    root = write(tmp_path / "root", {"a.json": '{"schema":"s","name":"a"}'})
    write(tmp_path, {"outside.json": '{"schema":"s","name":"outside"}'})
    (root / "b.json").symlink_to(root / "a.json")
    (root / "c.json").symlink_to(tmp_path / "outside.json")
    (root / "d").symlink_to(root, target_is_directory=True)
    assert [(name, origin) for _, _, name, origin in metas(root)] == [("a", "a.json:1"), ("a", "b.json:1")]


@pytest.mark.parametrize(
    ("files", "message"),
    [
        pytest.param({"a.json": '{"schema": "s", "name": }'}, r"a\.json:1: invalid JSON", id="invalid-json"),
        pytest.param({"a.json": '{"schema": "s"'}, r"a\.json:1: the object is not closed", id="unterminated"),
        pytest.param(
            {"a.json": '{"schema":"s","name":"a"}\n[1]'}, r"a\.json:2: expected a JSON object", id="array"
        ),
        pytest.param({"a.yaml": "schema: s\n  bad: [\n"}, r"a\.yaml:\d+: invalid YAML", id="invalid-yaml"),
        pytest.param({"a.yaml": "- 1\n- 2\n"}, r"a\.yaml:1: expected an object, found list", id="yaml-list"),
        pytest.param({"a.yaml": "name: x\n"}, r"a\.yaml:1: the object has no 'schema' field", id="no-schema"),
        pytest.param(
            {"d/a.yaml": "schema: s\nname: [1]\n"},
            r"d/a\.yaml:1: field 'name' must be a string",
            id="name-not-string",
        ),
        pytest.param(
            {"a.yaml": "x: 1\n---\nschema: 3\n"}, r"a\.yaml:1: the object has no", id="first-bad-doc"
        ),
        pytest.param(
            {"a.yaml": "schema: s\n---\nschema: [3]\n"}, r"a\.yaml:3: field 'schema'", id="later-bad-doc"
        ),
        pytest.param(
            {"README.md": "# Title\n\nSome *text*.\n"},
            r"README\.md:3: expected an object, found str",
            id="stray-non-catalog-file",
        ),
    ],
)
def test_errors_name_file_and_line(tmp_path: Path, files: dict[str, str], message: str) -> None:
    write(tmp_path, files)
    with pytest.raises(fbc.ParseError, match=message):
        list(fbc.iter_metas(tmp_path))


def test_oversized_object_is_refused_not_buffered(tmp_path: Path) -> None:
    write(tmp_path, {"a.json": '{"schema":"s","data":"' + "x" * 5000 + '"}'})
    with pytest.raises(fbc.ParseError, match="larger than 1000 bytes"):
        list(fbc.iter_metas(tmp_path, max_object_bytes=1000))


def test_root_must_be_a_directory(tmp_path: Path) -> None:
    with pytest.raises(fbc.ParseError, match="not a directory"):
        list(fbc.iter_metas(tmp_path / "missing"))


def test_iter_stream_reads_one_file_like_object() -> None:
    stream = io.BytesIO(b'{"schema":"olm.package","name":"p"}')
    [meta] = fbc.iter_stream(stream, "inline.json")
    assert (meta.name, str(meta.origin)) == ("p", "inline.json:1")
