"""Returning freed heap pages after an ingest (glibc's `malloc_trim`)."""

from __future__ import annotations

import ctypes.util
import platform

import pytest

from olm.process import memory


@pytest.mark.skipif(
    platform.libc_ver()[0] != "glibc" or ctypes.util.find_library("c") is None, reason="glibc only"
)
def test_freed_memory_is_released_on_glibc() -> None:
    garbage = [bytearray(4096) for _ in range(10_000)]
    del garbage
    assert memory.release_freed_memory()
