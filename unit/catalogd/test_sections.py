"""`SectionReader`: the byte ranges of a stored catalog read in order, from the page cache on the
event loop where the bytes are there (`read_cached`), else in a worker (`read`)."""

from __future__ import annotations

import mmap
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


def _written_past_the_page_cache(path: Path, data: bytes) -> None:
    """`data` (zero-padded to whole pages) written with O_DIRECT, so no page of the file is cached.
    Dropping cached pages with POSIX_FADV_DONTNEED is only advice: under load the kernel kept some."""
    buffer = mmap.mmap(-1, -(-len(data) // mmap.PAGESIZE) * mmap.PAGESIZE)  # page-aligned, as O_DIRECT needs
    buffer.write(data)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_DIRECT)
    except OSError as error:  # e.g. tmpfs, where every page is cached anyway
        pytest.skip(f"no O_DIRECT here: {error}")
    try:
        os.write(fd, buffer)
    finally:
        os.close(fd)


@pytest.mark.skipif(not hasattr(os, "RWF_NOWAIT"), reason="no RWF_NOWAIT on this platform")
def test_bytes_not_in_the_page_cache_are_left_to_the_worker(stored: tuple[Path, bytes]) -> None:
    cached, expected = stored
    path = cached.with_name("uncached.jsonl")
    _written_past_the_page_cache(path, cached.read_bytes())
    reader = SectionReader(path, list(SECTIONS), None)
    try:
        assert reader.read_cached(256 << 10) is None
        assert _drain(reader, 256 << 10) == expected
    finally:
        reader.close()


def test_a_compressed_body_is_never_read_on_the_loop(stored: tuple[Path, bytes]) -> None:
    path, _ = stored
    reader = SectionReader(path, list(SECTIONS), 1)
    try:
        assert reader.read_cached(256 << 10) is None
    finally:
        reader.close()
