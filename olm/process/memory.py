"""Handing memory freed by a large parse back to the system.

Parsing a catalog (catalogd) or a bundle (operator-controller) allocates and frees a great many
objects and buffers in a worker thread. CPython returns the memory to the C allocator, but glibc
keeps the freed pages of each thread's arena mapped, so the process's resident size would stay at
its peak. `malloc_trim` releases those pages; elsewhere it is a no-op.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from collections.abc import Callable


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        trim: Callable[[int], int] = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        return None
    return trim


def release_freed_memory() -> bool:
    """Return freed heap pages to the system (blocking, a few milliseconds); whether it could."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True
