"""JSON streams: a line that is exactly one object is decoded whole; anything else is scanned.

Both ways must agree on values, line numbers and errors, whatever the mix in one file.
"""

from __future__ import annotations

import io
import json

import pytest

from olm.fbc import _jsonstream

A = {"schema": "a", "text": '} { " \\ \n'}
B = {"schema": "b", "n": [1, {"x": "}"}]}


def read(data: bytes, max_object_bytes: int = 1 << 20) -> list[tuple[int, object]]:
    return list(_jsonstream.iter_objects(io.BytesIO(data), max_object_bytes=max_object_bytes))


def test_lines_pretty_objects_and_shared_lines_mix() -> None:
    compact = json.dumps(A)
    data = "\n".join(
        [compact, json.dumps(B, indent=2), f"{compact} {json.dumps(B)}", "", f"  {compact}  ", compact]
    )
    assert read(data.encode()) == [(1, A), (2, B), (11, A), (11, B), (13, A), (14, A)]


def test_a_long_line_is_one_object_across_read_chunks() -> None:
    big = {"schema": "big", "data": "x" * (2 * _jsonstream.CHUNK_SIZE)}
    data = (json.dumps(big) + "\n" + json.dumps(A) + "\n").encode()
    assert read(data, max_object_bytes=4 * _jsonstream.CHUNK_SIZE) == [(1, big), (2, A)]


@pytest.mark.parametrize(
    ("data", "line", "message"),
    [
        (b'{"schema": "a"}\n{"schema": x}\n', 2, "invalid JSON"),
        (b'{"schema": "a"}\n{"schema": "b"} junk\n', 2, "expected a JSON object"),
        (b'{"schema": "a"}\n[1]\n', 2, "expected a JSON object"),
        (b'{"schema": "a", "pad": "' + b"x" * 100 + b'"}\n', 1, "larger than"),
    ],
)
def test_errors_name_the_same_line_as_before(data: bytes, line: int, message: str) -> None:
    with pytest.raises(_jsonstream.JSONStreamError, match=message) as error:
        read(data, max_object_bytes=64)
    assert error.value.line == line
