"""Storage: JSONL plus index on disk, swapped atomically, kept across restarts, removed on delete."""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from olm import fbc
from olm.catalogd import compress
from olm.catalogd.storage import ALL, ALL_GZIP, CURRENT, INDEX, INFO, Storage, digest_key

D1 = "sha256:" + "1" * 64
D2 = "sha256:" + "2" * 64


def catalog(package: str = "p", versions: tuple[str, ...] = ("1.0.0",)) -> list[dict[str, Any]]:
    names = [f"{package}.v{v}" for v in versions]
    return [
        {"schema": "olm.package", "name": package, "defaultChannel": "stable"},
        {
            "schema": "olm.channel",
            "package": package,
            "name": "stable",
            "entries": [{"name": n} for n in names],
        },
        *[
            {
                "schema": "olm.bundle",
                "package": package,
                "name": n,
                "image": "r.io/b:1",
                "properties": [{"type": "olm.package", "value": {"packageName": package, "version": v}}],
            }
            for n, v in zip(names, versions, strict=True)
        ],
    ]


def metas(objects: list[dict[str, Any]]) -> Iterator[fbc.Meta]:
    text = "\n".join(json.dumps(o, indent=2) for o in objects).encode()
    return fbc.checked(fbc.iter_stream(io.BytesIO(text), "catalog.json"))


async def test_store_writes_jsonl_and_index_then_the_gzip_form(tmp_path: Path) -> None:
    storage = Storage(tmp_path)
    objects = catalog(versions=("1.0.0", "1.1.0"))
    stored = await storage.store("demo", D1, metas(objects))
    assert stored.gzip_size() is None  # served before it is compressed
    lines = stored.all_path.read_bytes().splitlines()
    assert [orjson.loads(line) for line in lines] == objects
    assert all(line == orjson.dumps(orjson.loads(line)) for line in lines)  # compact, one per line
    await storage.wait_compressed()
    assert gzip.decompress(stored.gzip_path.read_bytes()) == stored.all_path.read_bytes()
    assert stored.gzip_size() == stored.gzip_path.stat().st_size
    assert sorted(p.name for p in stored.directory.iterdir()) == [ALL, ALL_GZIP, INDEX, INFO]
    assert (stored.count, stored.digest, stored.size) == (4, D1, stored.all_path.stat().st_size)
    [(offset, length)] = stored.index().select(schema="olm.channel")
    assert orjson.loads(stored.all_path.read_bytes()[offset : offset + length]) == objects[1]
    assert storage.get("demo") == stored
    assert storage.contains("demo", D1)
    assert not storage.contains("demo", D2)


async def test_new_version_replaces_the_old_atomically(tmp_path: Path) -> None:
    storage = Storage(tmp_path)
    first = await storage.store("demo", D1, metas(catalog(versions=("1.0.0",))))
    held_open = first.all_path.open("rb")  # a response being streamed while the swap happens
    seen_during_store: list[str | None] = []

    def observed(source: Iterator[fbc.Meta]) -> Iterator[fbc.Meta]:
        for meta in source:
            current = storage.get("demo")
            seen_during_store.append(current.digest if current else None)
            yield meta

    second = await storage.store("demo", D2, observed(metas(catalog(versions=("2.0.0",)))))
    assert set(seen_during_store) == {D1}  # readers saw the old version, whole, until the swap
    assert storage.get("demo") == second
    assert not first.directory.exists()
    assert b"1.0.0" in held_open.read()
    held_open.close()
    assert sorted(p.name for p in (tmp_path / "demo").iterdir()) == sorted([CURRENT, second.directory.name])


async def test_invalid_catalog_keeps_the_previous_version_served(tmp_path: Path) -> None:
    storage = Storage(tmp_path)
    good = await storage.store("demo", D1, metas(catalog()))
    broken = [*catalog(), catalog()[-1]]  # the bundle twice
    with pytest.raises(fbc.InvalidCatalog, match="duplicate bundle"):
        await storage.store("demo", D2, metas(broken))
    assert storage.get("demo") == good
    assert sorted(p.name for p in (tmp_path / "demo").iterdir()) == sorted([CURRENT, good.directory.name])


async def test_first_store_failing_serves_nothing(tmp_path: Path) -> None:
    storage = Storage(tmp_path)
    with pytest.raises(fbc.ParseError):
        await storage.store("demo", D1, fbc.iter_stream(io.BytesIO(b"{nope"), "c.json"))
    assert storage.get("demo") is None
    assert storage.list() == {}


async def test_delete_stops_serving_and_removes_content(tmp_path: Path) -> None:
    storage = Storage(tmp_path)
    await storage.store("a", D1, metas(catalog()))
    await storage.store("b", D2, metas(catalog()))
    assert storage.list() == {"a": D1, "b": D2}
    await storage.delete("a")
    await storage.delete("never-stored")
    assert storage.get("a") is None
    assert not (tmp_path / "a").exists()
    assert storage.list() == {"b": D2}


async def test_a_restarted_process_serves_the_same_version(tmp_path: Path) -> None:
    stored = await Storage(tmp_path).store("demo", D1, metas(catalog()))
    (tmp_path / "demo" / ".staging-crashed").mkdir()
    (tmp_path / "demo" / "sha256-orphan.abcd").mkdir()
    restarted = Storage(tmp_path)
    restarted.recover()
    again = restarted.get("demo")
    assert again is not None
    assert (again.digest, again.content_hash, again.stored_at, again.directory) == (
        stored.digest,
        stored.content_hash,
        stored.stored_at,
        stored.directory,
    )
    assert again.index().select(schema="olm.bundle") == stored.index().select(schema="olm.bundle")
    assert sorted(p.name for p in (tmp_path / "demo").iterdir()) == sorted([CURRENT, stored.directory.name])


async def test_empty_catalog_is_stored_as_an_empty_file(tmp_path: Path) -> None:
    stored = await Storage(tmp_path).store("empty", D1, iter(()))
    assert (stored.count, stored.size, stored.all_path.read_bytes()) == (0, 0, b"")
    assert stored.index().select() == []


@pytest.mark.parametrize("name", ["..", ".", "a/b", "../escape", "Upper", ""])
async def test_names_that_are_not_dns_subdomains_never_touch_the_disk(tmp_path: Path, name: str) -> None:
    storage = Storage(tmp_path / "store")
    with pytest.raises(ValueError, match="DNS-1123"):
        await storage.store(name, D1, metas(catalog()))
    with pytest.raises(ValueError, match="DNS-1123"):
        await storage.delete(name)
    assert storage.get(name) is None
    assert list((tmp_path / "store").iterdir()) == []


@pytest.mark.parametrize(
    "digest",
    [
        pytest.param("127.0.0.1/catalog@sha256:" + "a" * 64, id="a-whole-reference"),
        pytest.param("sha256:../../etc", id="traversal"),
        pytest.param("SHA256:ABC", id="upper-case"),
    ],
)
def test_digest_key_refuses_anything_but_algorithm_and_hex(digest: str) -> None:
    with pytest.raises(ValueError, match="invalid digest"):
        digest_key(digest)


async def test_replacing_a_version_while_it_is_compressed_leaves_only_the_new_one(tmp_path: Path) -> None:
    storage = Storage(tmp_path)
    await storage.store("demo", D1, metas(catalog(versions=("1.0.0",))))  # its compression starts
    second = await storage.store("demo", D2, metas(catalog(versions=("2.0.0",))))
    await storage.wait_compressed()
    assert sorted(p.name for p in (tmp_path / "demo").iterdir()) == sorted([CURRENT, second.directory.name])
    assert gzip.decompress(second.gzip_path.read_bytes()) == second.all_path.read_bytes()


async def test_a_version_whose_compression_was_cut_short_is_compressed_again(tmp_path: Path) -> None:
    storage = Storage(tmp_path)
    stored = await storage.store("demo", D1, metas(catalog()))
    await storage.wait_compressed()
    # As a crash would leave it: no gzip form, a partial one being written.
    stored.gzip_path.unlink()
    compress.partial_path(stored.gzip_path).write_bytes(b"\x1f\x8b half")
    restarted = Storage(tmp_path)
    restarted.recover()
    served = restarted.get("demo")
    assert served is not None
    assert served.gzip_size() is None
    assert sorted(p.name for p in served.directory.iterdir()) == [ALL, INDEX, INFO]
    restarted.compress(served)
    await restarted.wait_compressed()
    assert gzip.decompress(served.gzip_path.read_bytes()) == served.all_path.read_bytes()


async def test_deleting_a_catalog_stops_its_compression(tmp_path: Path) -> None:
    storage = Storage(tmp_path)
    await storage.store("demo", D1, metas(catalog()))
    await storage.delete("demo")
    await storage.wait_compressed()
    assert not (tmp_path / "demo").exists()
