"""`SectionReader`: the byte ranges of a stored catalog read in order, from the page cache on the
event loop where the bytes are there (`read_cached`), else in a worker (`read`)."""

from __future__ import annotations

import errno
import os
import random
from pathlib import Path

import pytest

from olm.catalogd.sections import SectionReader

SECTIONS = [(10, 5000), (6000, 300_000), (400_000, 1), (400_001, 600_000)]


@pytest.fixture
def stored(tmp_path: Path) -> tuple[Path, bytes]:
    data = random.Random(7).randbytes(1_100_000)
    path = tmp_path / "all.jsonl"
    path.write_bytes(data)
    return path, b"".join(data[offset : offset + size] for offset, size in SECTIONS)


def _drain(reader: SectionReader, size: int) -> bytes:
    """What the server sends: each chunk from the page cache if it is there, else from `read`."""
    body = bytearray()
    while chunk := reader.read_cached(size) or reader.read(size):
        body += chunk
    return bytes(body)


def test_cached_reads_give_the_ranges_in_order(stored: tuple[Path, bytes]) -> None:
    path, expected = stored
    reader = SectionReader(path, list(SECTIONS), None)
    try:
        first = reader.read_cached(256 << 10)
        assert first is not None  # just written: in the page cache
        assert len(first) == 256 << 10  # across the first two ranges
        assert first + _drain(reader, 256 << 10) == expected
        assert reader.read_cached(256 << 10) == b""
    finally:
        reader.close()


@pytest.mark.skipif(not hasattr(os, "RWF_NOWAIT"), reason="no RWF_NOWAIT on this platform")
def test_bytes_not_in_the_page_cache_are_left_to_the_worker(
    stored: tuple[Path, bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The kernel's answer is scripted: the file's first `cached` bytes are in the page cache, the
    rest would have to come from disk, where a nowait read fails with EAGAIN. Which pages a real file
    has cached cannot be pinned down in a test: a nowait read of an uncached page starts readahead,
    and on a loaded machine that readahead sometimes finished before the kernel looked again, so a
    file written past the page cache (O_DIRECT) was read from the cache after all."""
    path, expected = stored
    cached = 100_000  # inside the second section
    real_preadv = os.preadv
    nowait_reads: list[int] = []

    def preadv(fd: int, buffers: list[bytearray], offset: int, flags: int = 0) -> int:
        if flags & os.RWF_NOWAIT:
            nowait_reads.append(offset)
            if offset >= cached:
                raise BlockingIOError(errno.EAGAIN, "Resource temporarily unavailable")
            (buffer,) = buffers
            return real_preadv(fd, [memoryview(buffer)[: cached - offset]], offset)  # as if cached
        return real_preadv(fd, buffers, offset, flags)

    monkeypatch.setattr(os, "preadv", preadv)
    reader = SectionReader(path, list(SECTIONS), None)
    try:
        first = reader.read_cached(256 << 10)
        assert first is not None
        assert first == expected[: 5000 + (cached - 6000)]  # what is cached, up to the first uncached byte
        assert reader.read_cached(256 << 10) is None  # the rest is left to the worker
        rest = _drain(reader, 256 << 10)
        assert first + rest == expected
        assert nowait_reads[:3] == [10, 6000, cached]  # the second ask starts at the uncached byte
    finally:
        reader.close()


def test_a_compressed_body_is_never_read_on_the_loop(stored: tuple[Path, bytes]) -> None:
    path, _ = stored
    reader = SectionReader(path, list(SECTIONS), 1)
    try:
        assert reader.read_cached(256 << 10) is None
    finally:
        reader.close()
