"""The gzip form of a stored catalog, written after the catalog is already being served.

Compressing is most of what storing a large catalog costs (about 5 s of CPU for 100 MB of FBC whose
bundle objects are base64, which barely compresses), and nothing needs the compressed file before a
client asks for `Content-Encoding: gzip`. So `Storage` serves the plain version first and
`compress_file` writes the gzip form beside it on a worker thread; clients get the identity
encoding until it is there.

The file is written under a temporary name and renamed into place once whole and fsynced, so a
reader finds a complete `all.jsonl.gz` or none; a failure or a stop removes the temporary file.
"""

from __future__ import annotations

import os
import threading
import zlib
from pathlib import Path

_READ = 1 << 20
_GZIP_WBITS = 31
"""zlib's gzip container (header and trailer) around the deflate stream."""


class Stopped(Exception):
    """`compress_file` gave up because its stop event was set."""


def partial_path(target: Path) -> Path:
    """Where `compress_file` writes `target` until it is whole."""
    return target.with_name(f".{target.name}.partial")


def compress_file(source: Path, target: Path, *, level: int, stop: threading.Event) -> int:
    """Write `source` gzip-compressed to `target`; its size. Blocking: run it on a worker thread.

    Raises `Stopped` once `stop` is set (checked first and between reads), `FileNotFoundError` when `source`
    or its directory went away (the version was replaced), and any other `OSError` (a full disk);
    in every case nothing is left under `target`'s names.
    """
    if stop.is_set():  # before anything is opened: the directory may be on its way out
        raise Stopped(f"stopped before compressing {source}")
    partial = partial_path(target)
    try:
        compressor = zlib.compressobj(level, zlib.DEFLATED, _GZIP_WBITS)
        with source.open("rb") as plain, partial.open("wb") as out:
            while chunk := plain.read(_READ):
                if stop.is_set():
                    raise Stopped(f"stopped compressing {source}")
                out.write(compressor.compress(chunk))
            out.write(compressor.flush())
            out.flush()
            os.fsync(out.fileno())
            size = out.tell()
        os.rename(partial, target)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return size
