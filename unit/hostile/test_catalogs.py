"""Hostile catalog files: each named case with the outcome a user sees.

An outcome is a `ParseError` naming the file (the catalog is refused with that message), problems
from validation (the catalog is refused, each problem named), or a number of metas read cleanly.
"""

from __future__ import annotations

import io

import pytest

from olm import fbc

P = b'{"schema":"olm.package","name":"p","defaultChannel":"s"}\n'
C = b'{"schema":"olm.channel","package":"p","name":"s","entries":[{"name":"b"}]}\n'
B = (
    b'{"schema":"olm.bundle","package":"p","name":"b","image":"i","properties":'
    b'[{"type":"olm.package","value":{"packageName":"p","version":"1.0.0"}}]}\n'
)


def bundle(name: str, *properties: bytes) -> bytes:
    return b'{"schema":"olm.bundle","package":"p","name":"%s","properties":[%s]}\n' % (
        name.encode(),
        b",".join(properties),
    )


def package_property(package: str, version: str) -> bytes:
    return b'{"type":"olm.package","value":{"packageName":"%s","version":"%s"}}' % (
        package.encode(),
        version.encode(),
    )


BILLION_LAUGHS = b"schema: x\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n" + b"".join(
    f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n".encode() for i in range(1, 9)
)

PARSE_ERRORS = [
    ("json-array-top-level", b"[1, 2]", "expected an object, found list"),
    ("json-unclosed-object", b'{"schema": "x"', "not closed before the end of the file"),
    ("json-unclosed-string", b'{"schema": "x}', "not closed before the end of the file"),
    ("json-invalid-token", b'{"schema": x}', "invalid JSON"),
    ("json-trailing-garbage", b'{"schema": "x"} nonsense', "expected a JSON object"),
    ("json-no-schema", b'{"name": "a"}', "has no 'schema' field"),
    ("json-schema-not-a-string", b'{"schema": 1}', "field 'schema' must be a string"),
    ("json-name-not-a-string", b'{"schema": "x", "name": ["a"]}', "field 'name' must be a string"),
    ("json-nesting-5000-deep", b'{"schema": "x", "a": ' + b"[" * 5000 + b"]" * 5000 + b"}", "depth limit"),
    ("json-object-over-the-size-cap", b'{"schema": "x", "a": "' + b"x" * (70 << 10) + b'"}', "larger than"),
    ("yaml-list-document", b"- a\n- b\n", "expected an object, found list"),
    ("yaml-scalar-document", b"hello\n", "expected an object, found str"),
    ("yaml-bad-indentation", b"schema: x\n  name: y\n bad: z\n", "mapping values are not allowed"),
    ("yaml-tab-indentation", b"schema: x\nobj:\n\tkey: v\n", "cannot start any token"),
    ("yaml-nul-byte", b"schema: x\nname: a\x00b\n", "control characters are not allowed"),
    ("yaml-invalid-utf8", b"schema: x\nname: \xff\xfe\n", "invalid leading UTF-8 octet"),
    ("yaml-billion-laughs", BILLION_LAUGHS, "document contains excessive aliasing"),
    ("yaml-anchor-holding-its-own-alias", b"schema: x\na: &a [1, *a]\n", "contains an alias of itself"),
    ("yaml-undefined-alias", b"schema: x\na: *nothing\n", "found undefined alias"),
    ("yaml-bad-base64-binary", b"schema: x\na: !!binary 'a'\n", "failed to decode base64"),
    ("yaml-sequence-as-mapping-key", b"schema: x\n? [a, b]\n: c\n", "a mapping key must be a scalar"),
    (
        "yaml-integer-past-64-bits",
        b"schema: x\nn: 123456789012345678901234567890\n",
        "Integer exceeds 64-bit",
    ),
    (
        "yaml-python-object-tag",
        b"schema: x\na: !!python/object:os.system ls\n",
        "could not determine a constructor",
    ),
    ("json-object-then-yaml", b'{"schema":"x"}\n---\nschema: y\n', "expected a JSON object"),
    ("json-lone-surrogate-escape", b'{"schema":"x","a":"\\ud800"}', "no low surrogate"),
    ("yaml-lone-surrogate-escape", b'schema: x\na: "\\ud800"\n', "invalid Unicode character escape"),
    ("yaml-y-is-a-boolean-not-a-name", b"schema: x\nname: y\n", "field 'name' must be a string"),
    ("yaml-nesting-5000-deep", b"schema: x\na: " + b"[" * 5000 + b"]" * 5000 + b"\n", "Recursion limit"),
]

PROBLEMS = [
    ("package-without-name", b'{"schema":"olm.package","defaultChannel":"s"}\n', "name must be set"),
    (
        "channel-without-name",
        P + C + B + b'{"schema":"olm.channel","package":"p","entries":[]}\n',
        "name must be set",
    ),
    (
        "bundle-without-name",
        P + C + B + b'{"schema":"olm.bundle","package":"p","properties":[]}\n',
        "name must be set",
    ),
    (
        "two-deprecations-for-one-package",
        P + C + B + b'{"schema":"olm.deprecations","package":"p","entries":[]}\n' * 2,
        "second olm.deprecations for the package",
    ),
    ("duplicate-package", P + P + C + B, "duplicate package"),
    ("duplicate-channel", P + C + C + B, "duplicate channel"),
    ("duplicate-bundle", P + C + B + B, "duplicate bundle"),
]

# Served, as upstream's catalogd serves them (docs/compat/catalog-rules.md); resolution copes
# with each (it skips what it cannot use, or the package in this catalog when an object of it is
# malformed).
UPSTREAM_SERVES = [
    (
        "channel-with-a-duplicate-entry",
        P + b'{"schema":"olm.channel","package":"p","name":"s","entries":[{"name":"b"},{"name":"b"}]}\n' + B,
    ),
    ("package-default-channel-missing", b'{"schema":"olm.package","name":"p","defaultChannel":"nope"}\n'),
    (
        "channel-of-unknown-package",
        P + C + B + b'{"schema":"olm.channel","package":"q","name":"s","entries":[]}\n',
    ),
    ("channel-without-package", P + C + B + b'{"schema":"olm.channel","name":"s","entries":[]}\n'),
    (
        "channel-entry-names-no-bundle",
        P + b'{"schema":"olm.channel","package":"p","name":"s","entries":[{"name":"ghost"}]}\n',
    ),
    (
        "channel-entry-without-name",
        P + b'{"schema":"olm.channel","package":"p","name":"s","entries":[{}]}\n' + B,
    ),
    ("channel-entries-not-a-list", P + b'{"schema":"olm.channel","package":"p","name":"s","entries":"b"}\n'),
    ("bundle-in-no-channel", P + C + B + bundle("orphan", package_property("p", "2.0.0"))),
    ("bundle-of-unknown-package", P + C + B + b'{"schema":"olm.bundle","package":"q","name":"b"}\n'),
    ("bundle-without-package-property", P + C + bundle("b")),
    (
        "bundle-with-two-package-properties",
        P + C + bundle("b", package_property("p", "1.0.0"), package_property("p", "1.0.1")),
    ),
    ("bundle-version-not-semver", P + C + bundle("b", package_property("p", "v1.0"))),
    ("bundle-names-another-package", P + C + bundle("b", package_property("q", "1.0.0"))),
    ("bundle-properties-not-objects", P + C + bundle("b", b'"x"')),
    (
        "deprecations-of-unknown-package",
        P + C + B + b'{"schema":"olm.deprecations","package":"q","entries":[]}\n',
    ),
    (
        "deprecations-of-unknown-bundle",
        P
        + C
        + B
        + b'{"schema":"olm.deprecations","package":"p","entries":[{"reference":{"schema":"olm.bundle",'
        b'"name":"ghost"},"message":"m"}]}\n',
    ),
    (
        "deprecations-reference-of-unknown-schema",
        P
        + C
        + B
        + b'{"schema":"olm.deprecations","package":"p","entries":[{"reference":{"schema":"olm.other"},'
        b'"message":"m"}]}\n',
    ),
]

ACCEPTED = [
    ("empty-file", b"", 0),
    ("only-comments-and-separators", b"# nothing\n---\n# here\n---\n", 0),
    ("unknown-schema-carried-untouched", b'{"schema":"example.com/custom","anything":[1,{"a":null}]}\n', 1),
    ("json-integer-past-64-bits-becomes-a-float", b'{"schema": "x", "n": 123456789012345678901234567890}', 1),
    ("byte-order-mark-then-json", b'\xef\xbb\xbf{"schema": "x"}', 1),
    ("valid-minimal-catalog", P + C + B, 3),
    # Upstream's catalogd serves it, and resolution never reads defaultChannel.
    ("package-without-default-channel", b'{"schema":"olm.package","name":"p"}\n' + C + B, 3),
    ("yaml-document-then-json-document", b'schema: x\n---\n{"schema": "y"}\n', 2),
    ("json-nul-escape-in-a-string", b'{"schema":"x","a":"\\u0000"}', 1),
    ("json-duplicate-keys-last-wins", b'{"schema":"x","schema":"y"}', 1),
    (
        "yaml-anchor-used-200-times",  # aliasing in proportion: go-yaml v2 reads it too
        b"schema: x\nbase: &b {a: 1, b: [1, 2, 3]}\n" + b"".join(b"k%d: *b\n" % i for i in range(200)),
        1,
    ),
    ("yaml-merge-key", b"base: &b {x: 1}\nschema: x\nm: {<<: *b, z: 2}\n", 1),
    ("yaml-crlf-line-endings", b"schema: x\r\nname: z\r\n", 1),
]

CASES = len(PARSE_ERRORS) + len(PROBLEMS) + len(UPSTREAM_SERVES) + len(ACCEPTED)


def read(data: bytes) -> list[fbc.Meta]:
    return list(fbc.iter_stream(io.BytesIO(data), "catalog.yaml", max_object_bytes=64 << 10))


@pytest.mark.parametrize(("data", "message"), [pytest.param(d, m, id=i) for i, d, m in PARSE_ERRORS])
def test_refused_while_reading(data: bytes, message: str) -> None:
    with pytest.raises(fbc.ParseError) as caught:
        read(data)
    assert caught.value.path == "catalog.yaml"
    assert message in str(caught.value)


@pytest.mark.parametrize(("data", "message"), [pytest.param(d, m, id=i) for i, d, m in PROBLEMS])
def test_refused_by_validation(data: bytes, message: str) -> None:
    problems = fbc.validate(read(data))
    assert any(message in str(p) for p in problems), problems
    with pytest.raises(fbc.InvalidCatalog, match="invalid catalog"):
        list(fbc.checked(read(data)))


@pytest.mark.parametrize(("data", "count"), [pytest.param(d, c, id=i) for i, d, c in ACCEPTED])
def test_accepted(data: bytes, count: int) -> None:
    metas = read(data)
    assert len(metas) == count
    assert fbc.validate(metas) == []


@pytest.mark.parametrize("data", [pytest.param(d, id=i) for i, d in UPSTREAM_SERVES])
def test_served_as_upstream_serves_it(data: bytes) -> None:
    metas = read(data)
    assert fbc.validate(metas) == []
    assert list(fbc.checked(metas)) == metas
