"""Just enough of PNG to read a browser screenshot's pixels without an imaging library: 8-bit
greyscale, RGB and RGBA (what Chromium writes), not interlaced."""

from __future__ import annotations

import struct
import zlib
from collections import Counter
from dataclasses import dataclass

_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# Colour type -> bytes per pixel at 8 bits per sample.
_CHANNELS = {0: 1, 2: 3, 4: 2, 6: 4}


@dataclass(frozen=True)
class Image:
    width: int
    height: int
    channels: int
    rows: list[bytes]

    def colours(self) -> Counter[bytes]:
        """How many pixels have each colour."""
        counts: Counter[bytes] = Counter()
        step = self.channels
        for row in self.rows:
            counts.update(row[i : i + step] for i in range(0, len(row), step))
        return counts


def _paeth(left: int, up: int, up_left: int) -> int:
    estimate = left + up - up_left
    dl, du, dul = abs(estimate - left), abs(estimate - up), abs(estimate - up_left)
    if dl <= du and dl <= dul:
        return left
    return up if du <= dul else up_left


def _unfilter(kind: int, line: bytes, previous: bytes, bpp: int) -> bytes:
    if kind == 0:
        return line
    if kind == 2:
        return bytes((a + b) & 0xFF for a, b in zip(line, previous, strict=True))
    out = bytearray(line)
    for i in range(len(out)):
        left = out[i - bpp] if i >= bpp else 0
        up = previous[i]
        if kind == 1:
            out[i] = (out[i] + left) & 0xFF
        elif kind == 3:
            out[i] = (out[i] + ((left + up) >> 1)) & 0xFF
        elif kind == 4:
            out[i] = (out[i] + _paeth(left, up, previous[i - bpp] if i >= bpp else 0)) & 0xFF
        else:
            raise ValueError(f"unknown PNG filter type {kind}")
    return bytes(out)


def decode(data: bytes) -> Image:
    if not data.startswith(_SIGNATURE):
        raise ValueError("not a PNG file")
    offset, header, compressed = len(_SIGNATURE), b"", bytearray()
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset : offset + 4])
        kind = data[offset + 4 : offset + 8]
        body = data[offset + 8 : offset + 8 + length]
        offset += 12 + length
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            compressed += body
        elif kind == b"IEND":
            break
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", header)
    if depth != 8 or colour not in _CHANNELS or interlace:
        raise ValueError(f"unsupported PNG: bit depth {depth}, colour type {colour}, interlace {interlace}")
    channels = _CHANNELS[colour]
    raw = zlib.decompress(bytes(compressed))
    stride = width * channels
    rows: list[bytes] = []
    previous = bytes(stride)
    for y in range(height):
        start = y * (stride + 1)
        previous = _unfilter(raw[start], raw[start + 1 : start + 1 + stride], previous, channels)
        rows.append(previous)
    return Image(width, height, channels, rows)


def blank_reason(png: bytes, size: tuple[int, int], *, max_background_share: float) -> str | None:
    """Why a screenshot of `size` counts as blank (too few colours, or more than
    `max_background_share` of its pixels the most common one), or None when it shows a drawing."""
    image = decode(png)
    assert (image.width, image.height) == size
    colours = image.colours()
    background_share = colours.most_common(1)[0][1] / (image.width * image.height)
    if len(colours) < 8:
        return f"only {len(colours)} colours"
    if background_share > max_background_share:
        return f"{background_share:.1%} of the pixels are the background colour"
    return None
