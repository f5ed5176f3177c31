"""The runtime's binary build: per-target cache keys follow each target's own pins, the assembled
directory holds every output, complete entries are found instead of built, a missing toolchain is
named, and the control plane's pins ship with the package."""

from __future__ import annotations

import fcntl
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from olm_runtime.testing import binaries
from olm_runtime.testing.controlplane import COMPONENTS


def _gomod(root: Path) -> Path:
    for module in ("etcd", "kwok"):
        (root / module).mkdir(parents=True)
        (root / module / "go.mod").write_text(
            f"module example.test/wrap/{module}\n\nrequire example.test/{module} v1.0.0\n"
        )
        (root / module / "go.sum").write_text(f"example.test/{module} v1.0.0 h1:abc=\n")
    return root


def _targets(root: Path) -> tuple[binaries.Target, binaries.Target]:
    etcd = binaries.Target(module="etcd", packages=(".",), binaries=("etcd",), gomod=root)
    kwok = binaries.Target(
        module="kwok",
        packages=("example.test/kwok",),
        binaries=("kwok",),
        assets=("stages.yaml",),
        gomod=root,
    )
    return etcd, kwok


def _fill(directory: Path, names: tuple[str, ...]) -> None:
    directory.mkdir(parents=True)
    for name in names:
        (directory / name).write_text(name)


def test_the_control_plane_targets_produce_what_the_control_plane_runs() -> None:
    outputs = {name for target in binaries.CONTROL_PLANE for name in target.outputs}
    assert outputs == {*COMPONENTS, binaries.KWOK_STAGES_FILE}
    assert binaries.KWOK.write_assets is binaries.write_kwok_stages
    assert binaries.KUBERNETES.stamp_kubernetes_version


def test_the_pins_ship_inside_the_package() -> None:
    assert Path(binaries.__file__).parent / "gomod" == binaries.GOMOD_DIR
    for target in binaries.CONTROL_PLANE:
        assert (target.module_dir / "go.mod").is_file()
        assert (target.module_dir / "go.sum").is_file()
    assert binaries.kubernetes_version() == "v1.35.4"
    assert binaries.required_version(binaries.GOMOD_DIR / "etcd", "go.etcd.io/etcd/server/v3") == "v3.6.5"
    assert binaries.required_version(binaries.GOMOD_DIR / "kwok", "sigs.k8s.io/kwok") == "v0.8.0"


def test_the_name_the_directory_and_the_writer_stay_out_of_the_key(tmp_path: Path) -> None:
    # Cache entries built before a Target had them keep their keys.
    etcd, _ = _targets(_gomod(tmp_path / "a"))
    _gomod(tmp_path / "b")
    named = binaries.Target(
        module="etcd",
        name="etcd-elsewhere",
        packages=(".",),
        binaries=("etcd",),
        gomod=tmp_path / "b",
        write_assets=lambda go, module_dir, output: None,
    )
    assert binaries.target_key(named) == binaries.target_key(etcd)


def test_the_assembled_directory_names_the_kubernetes_release_and_every_target_key(tmp_path: Path) -> None:
    directory = binaries.assembled_dir(binaries.CONTROL_PLANE, tmp_path)
    keys = binaries.target_keys(binaries.CONTROL_PLANE)
    assert directory == tmp_path / f"{binaries.kubernetes_version()}-{binaries.combined_key(keys)}"


def test_the_cache_is_olm_runtimes_unless_configured(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("OLM_RUNTIME_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert binaries.cache_root() == tmp_path / "xdg" / "olm-runtime" / "bin"
    monkeypatch.setenv("OLM_RUNTIME_CACHE_DIR", str(tmp_path / "mine"))
    assert binaries.cache_root() == tmp_path / "mine"


def test_a_pin_change_changes_only_that_targets_key(tmp_path: Path) -> None:
    root = _gomod(tmp_path)
    targets = _targets(root)
    before = binaries.target_keys(targets)
    (root / "kwok" / "go.mod").write_text(
        "module example.test/wrap/kwok\n\nrequire example.test/kwok v1.0.1\n"
    )
    after = binaries.target_keys(targets)
    assert after["etcd"] == before["etcd"]
    assert after["kwok"] != before["kwok"]
    assert binaries.combined_key(after) != binaries.combined_key(before)


def test_a_new_file_in_a_wrapper_module_changes_its_key(tmp_path: Path) -> None:
    etcd, _ = _targets(_gomod(tmp_path))
    before = binaries.target_key(etcd)
    (tmp_path / "etcd" / "main.go").write_text("package main\n")
    assert binaries.target_key(etcd) != before


def test_the_key_follows_how_a_target_is_built_not_only_its_files(tmp_path: Path) -> None:
    etcd, _ = _targets(_gomod(tmp_path))
    renamed = binaries.Target(module="etcd", packages=(".",), binaries=("etcd-server",), gomod=tmp_path)
    tagged = binaries.Target(module="etcd", packages=(".",), binaries=("etcd",), tags=("x",), gomod=tmp_path)
    assert len({binaries.target_key(t) for t in (etcd, renamed, tagged)}) == 3


def test_a_source_patch_is_part_of_the_key(tmp_path: Path) -> None:
    etcd, _ = _targets(_gomod(tmp_path))
    patch = binaries.SourcePatch(
        module="example.test/etcd", file="a.go", after="x\n", insert="y\n", reason="r"
    )
    patched = binaries.Target(
        module="etcd", packages=(".",), binaries=("etcd",), patches=(patch,), gomod=tmp_path
    )
    other = binaries.SourcePatch(
        module="example.test/etcd", file="a.go", after="x\n", insert="z\n", reason="r"
    )
    repatched = binaries.Target(
        module="etcd", packages=(".",), binaries=("etcd",), patches=(other,), gomod=tmp_path
    )
    assert len({binaries.target_key(t) for t in (etcd, patched, repatched)}) == 3


STORE_BEFORE_PUBLISHING = binaries.SourcePatch(
    module="example.test/m",
    file="pkg/handler.go",
    after="\ta := new()\n",
    insert="\ta.store()\n",
    reason="it crashes",
)


def test_a_source_patch_inserts_after_its_one_anchor(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    source = tmp_path / "pkg" / "handler.go"
    source.write_text("func f() {\n\ta := new()\n\tpublish()\n}\n")
    STORE_BEFORE_PUBLISHING.apply(tmp_path)
    assert source.read_text() == "func f() {\n\ta := new()\n\ta.store()\n\tpublish()\n}\n"


@pytest.mark.parametrize("text", ["func f() {}\n", "\ta := new()\n\ta := new()\n"])
def test_a_source_patch_whose_anchor_is_not_there_exactly_once_fails_the_build(
    tmp_path: Path, text: str
) -> None:
    (tmp_path / "pkg").mkdir()
    source = tmp_path / "pkg" / "handler.go"
    source.write_text(text)
    with pytest.raises(
        binaries.BuildError, match=r"cannot patch example.test/m/pkg/handler.go \(it crashes\)"
    ):
        STORE_BEFORE_PUBLISHING.apply(tmp_path)
    assert source.read_text() == text


def test_keys_do_not_depend_on_where_the_modules_are(tmp_path: Path) -> None:
    first, second = _targets(_gomod(tmp_path / "a")), _targets(_gomod(tmp_path / "b"))
    assert binaries.target_keys(first) == binaries.target_keys(second)
    assert binaries.combined_key({"b": "2", "a": "1"}) == binaries.combined_key({"a": "1", "b": "2"})


def test_two_targets_of_one_module_need_names_of_their_own(tmp_path: Path) -> None:
    etcd, _ = _targets(_gomod(tmp_path))
    again = binaries.Target(module="etcd", packages=("./other",), binaries=("other",), gomod=tmp_path)
    with pytest.raises(binaries.BuildError, match="two targets are named etcd"):
        binaries.target_keys((etcd, again))
    named = binaries.Target(module="etcd", name="etcd-other", packages=("./other",), binaries=("other",))
    assert set(binaries.target_keys((etcd, named))) == {"etcd", "etcd-other"}


def test_target_directories_are_per_name_and_key(tmp_path: Path) -> None:
    assert binaries.target_dir(tmp_path, "kwok", "0123") == tmp_path / "targets" / "kwok-0123"


def test_two_targets_may_not_produce_the_same_name(tmp_path: Path) -> None:
    etcd, _ = _targets(tmp_path)
    other = binaries.Target(module="other", packages=(".",), binaries=("etcd",))
    with pytest.raises(binaries.BuildError, match="two targets produce etcd"):
        binaries.assembly_plan((etcd, other), {"etcd": Path("/a"), "other": Path("/b")})


def test_assemble_links_every_planned_file(tmp_path: Path) -> None:
    targets = _targets(tmp_path / "gomod")
    sources = {"etcd": tmp_path / "targets" / "etcd-1", "kwok": tmp_path / "targets" / "kwok-2"}
    for target in targets:
        _fill(sources[target.name], target.outputs)
    destination = tmp_path / "v1.0.0-abc"
    binaries.assemble(binaries.assembly_plan(targets, sources), destination)
    assert sorted(p.name for p in destination.iterdir()) == ["etcd", "kwok", "stages.yaml"]
    assert (destination / "stages.yaml").read_text() == "stages.yaml"
    assert (destination / "etcd").stat().st_ino == (sources["etcd"] / "etcd").stat().st_ino
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_built_targets_are_assembled_without_go(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    targets = _targets(_gomod(tmp_path / "gomod"))
    root = tmp_path / "cache"
    for target in targets:
        _fill(binaries.target_dir(root, target.name, binaries.target_key(target)), target.outputs)
    located = binaries.ensure(targets, root=root, build=False, log=lambda _: None)
    assert located == binaries.assembled_dir(targets, root)
    assert sorted(p.name for p in located.iterdir()) == ["etcd", "kwok", "stages.yaml"]


def test_complete_entries_of_another_cache_are_linked_in_not_built(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    targets = _targets(_gomod(tmp_path / "gomod"))
    old, root = tmp_path / "old", tmp_path / "cache"
    for target in targets:
        _fill(binaries.target_dir(old, target.name, binaries.target_key(target)), target.outputs)
    found: list[str] = []
    located = binaries.ensure(targets, root=root, sources=(old,), log=found.append)
    assert sorted(p.name for p in located.iterdir()) == ["etcd", "kwok", "stages.yaml"]
    assert len(found) == 2
    assert all(message.startswith("found ") for message in found)
    etcd = binaries.target_dir(root, "etcd", binaries.target_key(targets[0])) / "etcd"
    assert (
        etcd.stat().st_ino
        == (binaries.target_dir(old, "etcd", binaries.target_key(targets[0])) / "etcd").stat().st_ino
    )


def test_a_target_another_process_is_building_is_waited_for_not_built_again(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # A `go` that leaves a mark: ensure() must not build what the lock holder finished meanwhile.
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "go").write_text(f'#!/bin/sh\necho "$@" >> {tmp_path / "go-called"}\nexit 1\n')
    (tools / "go").chmod(0o755)
    monkeypatch.setenv("PATH", str(tools))
    targets = _targets(_gomod(tmp_path / "gomod"))
    root = tmp_path / "cache"
    directories = [binaries.target_dir(root, target.name, binaries.target_key(target)) for target in targets]
    directories[0].parent.mkdir(parents=True)
    held = [open(binaries.build_lock_file(directory), "a") for directory in directories]  # noqa: SIM115
    for lock in held:
        fcntl.flock(lock, fcntl.LOCK_EX)
    messages: list[str] = []
    with ThreadPoolExecutor(max_workers=1) as pool:
        located = pool.submit(binaries.ensure, targets, root=root, log=messages.append)
        deadline = time.monotonic() + 10
        while not any(message.startswith("waiting for another process building") for message in messages):
            assert time.monotonic() < deadline, f"ensure() did not wait for the lock: {messages}"
            assert not located.done(), located.result()
            time.sleep(0.01)
        for target, directory, lock in zip(targets, directories, held, strict=True):
            _fill(directory, target.outputs)  # what the other process built
            fcntl.flock(lock, fcntl.LOCK_UN)
            lock.close()
        directory = located.result(timeout=10)
    assert sorted(p.name for p in directory.iterdir()) == ["etcd", "kwok", "stages.yaml"]
    assert not (tmp_path / "go-called").exists()
    assert not any(message.startswith("building") for message in messages)


def test_without_build_a_missing_target_is_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    targets = _targets(_gomod(tmp_path / "gomod"))
    with pytest.raises(binaries.BuildError, match=r"not built yet in .*: etcd, kwok"):
        binaries.ensure(targets, root=tmp_path / "cache", build=False)
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").iterdir())


def test_kubernetes_binaries_are_stamped_with_the_pinned_release() -> None:
    flags = binaries.kubernetes_version_ldflags("v1.35.4")
    assert "-X k8s.io/component-base/version.gitVersion=v1.35.4" in flags
    assert "-X k8s.io/component-base/version.gitMajor=1" in flags
    assert "-X k8s.io/component-base/version.gitMinor=35" in flags
    assert "-X k8s.io/client-go/pkg/version.gitVersion=v1.35.4" in flags
    assert all(" " not in flag.removeprefix("-X ") for flag in flags)


def test_missing_go_toolchain_is_reported_by_name(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(binaries.BuildError, match="Go toolchain is not on PATH: install Go"):
        binaries.ensure(root=tmp_path)
