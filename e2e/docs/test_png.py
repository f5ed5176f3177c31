"""The screenshot decoder reads every PNG filter type back to the pixels that were written."""

from __future__ import annotations

import struct
import zlib

import pytest

from e2e.docs.png import decode

WIDTH, HEIGHT, BPP = 5, 4, 3
PIXELS = [bytes((x * 40 + y * 7) % 256 for x in range(WIDTH * BPP)) for y in range(HEIGHT)]


def _predict(kind: int, left: int, up: int, up_left: int) -> int:
    if kind == 1:
        return left
    if kind == 2:
        return up
    if kind == 3:
        return (left + up) >> 1
    estimate = left + up - up_left
    options = [(abs(estimate - left), left), (abs(estimate - up), up), (abs(estimate - up_left), up_left)]
    return min(options, key=lambda option: option[0])[1]


def _filtered(kind: int, row: bytes, previous: bytes) -> bytes:
    if kind == 0:
        return row
    return bytes(
        (
            row[i]
            - _predict(
                kind, row[i - BPP] if i >= BPP else 0, previous[i], previous[i - BPP] if i >= BPP else 0
            )
        )
        & 0xFF
        for i in range(len(row))
    )


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def _png(kind: int) -> bytes:
    raw = b"".join(
        bytes([kind]) + _filtered(kind, row, PIXELS[y - 1] if y else bytes(len(row)))
        for y, row in enumerate(PIXELS)
    )
    header = struct.pack(">IIBBBBB", WIDTH, HEIGHT, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(raw))
        + _chunk(b"IEND", b"")
    )


@pytest.mark.parametrize("kind", [0, 1, 2, 3, 4], ids=["none", "sub", "up", "average", "paeth"])
def test_every_filter_decodes_to_the_original_pixels(kind: int) -> None:
    image = decode(_png(kind))
    assert (image.width, image.height, image.channels) == (WIDTH, HEIGHT, BPP)
    assert image.rows == PIXELS
    assert sum(image.colours().values()) == WIDTH * HEIGHT


def test_not_a_png_is_refused() -> None:
    with pytest.raises(ValueError, match="not a PNG"):
        decode(b"GIF89a")
