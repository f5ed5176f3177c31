"""Fuzz target: one catalog file (JSON stream or YAML documents) read, viewed and validated.

Promises checked:

- reading raises only `ParseError` (with the file's name), whatever the bytes;
- typed views raise only `fbc.ShapeError`, and validation reports problems, never raises;
- the compact JSON a meta is served as (`Meta.blob`) reads back as the same meta, byte for byte.
"""

from __future__ import annotations

import contextlib
import io

from olm import fbc

MAX_OBJECT_BYTES = 1 << 16

SEEDS = (
    b"schema: olm.package\nname: p\ndefaultChannel: stable\n---\n"
    b"schema: olm.channel\nname: stable\npackage: p\nentries:\n  - name: p.v1.0.0\n"
    b"    skipRange: '>=0.9.0 <1.0.0'\n---\n"
    b"schema: olm.bundle\nname: p.v1.0.0\npackage: p\nimage: example.test/p:1\nproperties:\n"
    b"  - type: olm.package\n    value: {packageName: p, version: 1.0.0}\n"
    b"  - type: olm.bundle.object\n    value: {data: eyJraW5kIjoiQ1JEIn0=}\n",
    b'{"schema":"olm.package","name":"p","defaultChannel":"s"}\n'
    b'{"schema":"olm.bundle","name":"b","package":"p","properties":[{"type":"olm.csv.metadata",'
    b'"value":{"displayName":"P","keywords":["a"],"installModes":[{"type":"AllNamespaces","supported":true}]}}]}',
    b'{\n  "schema": "olm.deprecations",\n  "package": "p",\n  "entries": [\n    {"reference": '
    b'{"schema": "olm.bundle", "name": "b"}, "message": "gone"}\n  ]\n}\n',
    b"schema: x.custom\nwhen: 2024-01-02\nbool: y\nint: 0x1F\nfloat: 1.0\nbin: !!binary aGk=\n1: one\n",
)


def one_input(data: bytes) -> None:
    try:
        metas = list(fbc.iter_stream(io.BytesIO(data), "catalog.yaml", max_object_bytes=MAX_OBJECT_BYTES))
    except fbc.ParseError as error:
        if error.path != "catalog.yaml":
            raise AssertionError(f"the error names another file: {error}") from error
        return
    validator = fbc.Validator()
    for meta in metas:
        with contextlib.suppress(fbc.ShapeError):
            fbc.view(meta)
        validator.add(meta)
        (again,) = fbc.iter_stream(io.BytesIO(meta.blob), "blob.json", max_object_bytes=MAX_OBJECT_BYTES)
        assert (again.schema, again.package, again.name, again.blob) == (
            meta.schema,
            meta.package,
            meta.name,
            meta.blob,
        ), (meta.blob, again.blob)
    validator.problems()
