"""`BackgroundGzip` on a device that is full: errors surface, descriptors never leak."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from olm.catalogd.compress import BackgroundGzip

FULL = Path("/dev/full")
"""Every write to it fails with ENOSPC, as on a full filesystem."""

pytestmark = pytest.mark.skipif(not FULL.exists(), reason="needs /dev/full")


def open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_abort_on_a_full_device_keeps_the_callers_error_and_closes_the_file() -> None:
    def write_then_fail() -> None:
        with BackgroundGzip(FULL, level=1) as compressed:
            compressed.write(os.urandom(3 << 20))
            raise ValueError("invalid catalog")

    before = open_descriptors()
    with pytest.raises(ValueError, match="invalid catalog"):
        write_then_fail()
    assert open_descriptors() == before


def test_close_on_a_full_device_raises_enospc_and_closes_the_file() -> None:
    def write() -> None:
        with BackgroundGzip(FULL, level=1) as compressed:
            compressed.write(os.urandom(3 << 20))

    before = open_descriptors()
    with pytest.raises(OSError, match="No space left on device"):
        write()
    assert open_descriptors() == before
