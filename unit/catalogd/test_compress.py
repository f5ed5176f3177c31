"""`compress_file`: a whole gzip file or none, whatever stops it."""

from __future__ import annotations

import gzip
import os
import threading
from pathlib import Path

import pytest

from olm.catalogd.compress import Stopped, compress_file, partial_path


def source(tmp_path: Path) -> Path:
    path = tmp_path / "all.jsonl"
    path.write_bytes(b'{"schema":"olm.package","name":"p"}\n' * 20_000 + os.urandom(3 << 20))
    return path


def test_the_gzip_form_appears_whole_under_its_name(tmp_path: Path) -> None:
    plain = source(tmp_path)
    target = tmp_path / "all.jsonl.gz"
    size = compress_file(plain, target, level=1, stop=threading.Event())
    assert gzip.decompress(target.read_bytes()) == plain.read_bytes()
    assert size == target.stat().st_size
    assert sorted(p.name for p in tmp_path.iterdir()) == ["all.jsonl", "all.jsonl.gz"]


def test_a_stop_leaves_nothing_behind(tmp_path: Path) -> None:
    plain = source(tmp_path)
    stop = threading.Event()
    stop.set()
    with pytest.raises(Stopped):
        compress_file(plain, tmp_path / "all.jsonl.gz", level=1, stop=stop)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["all.jsonl"]


def test_a_source_that_went_away_leaves_nothing_behind(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        compress_file(tmp_path / "gone", tmp_path / "all.jsonl.gz", level=1, stop=threading.Event())
    assert list(tmp_path.iterdir()) == []


def test_the_partial_file_is_hidden_beside_the_target(tmp_path: Path) -> None:
    assert partial_path(tmp_path / "all.jsonl.gz") == tmp_path / ".all.jsonl.gz.partial"
