"""The control-plane build: per-target cache keys follow each target's own pins, the assembled
directory holds every output, a missing toolchain is named."""

from __future__ import annotations

from pathlib import Path

import pytest

from hack.controlplane import build

ETCD = build.Target(module="etcd", packages=(".",), binaries=("etcd",))
KWOK = build.Target(
    module="kwok", packages=("example.test/kwok",), binaries=("kwok",), assets=("stages.yaml",)
)


def _gomod(root: Path) -> Path:
    for module in ("etcd", "kwok"):
        (root / module).mkdir(parents=True)
        (root / module / "go.mod").write_text(
            f"module olmpy.local/hack/{module}\n\nrequire example.test/{module} v1.0.0\n"
        )
        (root / module / "go.sum").write_text(f"example.test/{module} v1.0.0 h1:abc=\n")
    return root


def test_cache_directory_names_the_kubernetes_release_and_every_target_key() -> None:
    directory = build.binary_dir()
    assert directory.name == f"{build.kubernetes_version()}-{build.combined_key(build.target_keys())}"
    assert build.kubernetes_version().startswith("v1.")


def test_a_pin_change_changes_only_that_targets_key(tmp_path: Path) -> None:
    root = _gomod(tmp_path)
    before = build.target_keys((ETCD, KWOK), root)
    (root / "kwok" / "go.mod").write_text(
        "module olmpy.local/hack/kwok\n\nrequire example.test/kwok v1.0.1\n"
    )
    after = build.target_keys((ETCD, KWOK), root)
    assert after["etcd"] == before["etcd"]
    assert after["kwok"] != before["kwok"]
    assert build.combined_key(after) != build.combined_key(before)


def test_a_new_file_in_a_wrapper_module_changes_its_key(tmp_path: Path) -> None:
    root = _gomod(tmp_path)
    before = build.target_key(ETCD, root)
    (root / "etcd" / "main.go").write_text("package main\n")
    assert build.target_key(ETCD, root) != before


def test_the_key_follows_how_a_target_is_built_not_only_its_files(tmp_path: Path) -> None:
    root = _gomod(tmp_path)
    renamed = build.Target(module="etcd", packages=(".",), binaries=("etcd-server",))
    assert build.target_key(renamed, root) != build.target_key(ETCD, root)


def test_keys_do_not_depend_on_where_the_modules_are(tmp_path: Path) -> None:
    first, second = _gomod(tmp_path / "a"), _gomod(tmp_path / "b")
    assert build.target_keys((ETCD, KWOK), first) == build.target_keys((ETCD, KWOK), second)
    assert build.combined_key({"b": "2", "a": "1"}) == build.combined_key({"a": "1", "b": "2"})


def test_target_directories_are_per_module_and_key(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OLMPY_CACHE_DIR", str(tmp_path))
    assert build.target_dir("kwok", "0123") == tmp_path / "bin" / "targets" / "kwok-0123"


def test_the_assembly_plan_lists_every_output_once() -> None:
    directories = {target.module: Path("/cache") / target.module for target in build.TARGETS}
    plan = build.assembly_plan(build.TARGETS, directories)
    assert tuple(plan) == build.OUTPUTS
    assert len(set(build.OUTPUTS)) == len(build.OUTPUTS)
    assert plan["kubelet"] == Path("/cache/kubernetes/kubelet")
    assert plan["kwok-stages.yaml"] == Path("/cache/kwok/kwok-stages.yaml")
    assert plan[build.CERT_MANAGER_CRDS_FILE] == Path("/cache/certmanager") / build.CERT_MANAGER_CRDS_FILE


def test_the_node_binaries_are_outputs() -> None:
    for name in ("kubelet", "kube-proxy", "coredns", "pause"):
        assert name in build.BINARIES
    (kubernetes,) = [t for t in build.TARGETS if t.module == "kubernetes"]
    assert kubernetes.stamp_kubernetes_version
    assert len(kubernetes.packages) == len(kubernetes.binaries)


def test_two_targets_may_not_produce_the_same_name() -> None:
    other = build.Target(module="other", packages=(".",), binaries=("etcd",))
    with pytest.raises(build.BuildError, match="two targets produce etcd"):
        build.assembly_plan((ETCD, other), {"etcd": Path("/a"), "other": Path("/b")})


def test_assemble_links_every_planned_file(tmp_path: Path) -> None:
    sources = {"etcd": tmp_path / "targets" / "etcd-1", "kwok": tmp_path / "targets" / "kwok-2"}
    for target in (ETCD, KWOK):
        sources[target.module].mkdir(parents=True)
        for name in target.outputs:
            (sources[target.module] / name).write_text(name)
    destination = tmp_path / "v1.0.0-abc"
    build.assemble(build.assembly_plan((ETCD, KWOK), sources), destination)
    assert sorted(p.name for p in destination.iterdir()) == ["etcd", "kwok", "stages.yaml"]
    assert (destination / "stages.yaml").read_text() == "stages.yaml"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_kubernetes_binaries_are_stamped_with_the_pinned_release() -> None:
    flags = build.kubernetes_version_ldflags("v1.35.4")
    assert "-X k8s.io/component-base/version.gitVersion=v1.35.4" in flags
    assert "-X k8s.io/component-base/version.gitMajor=1" in flags
    assert "-X k8s.io/component-base/version.gitMinor=35" in flags
    assert "-X k8s.io/client-go/pkg/version.gitVersion=v1.35.4" in flags
    assert all(" " not in flag.removeprefix("-X ") for flag in flags)


def test_missing_go_toolchain_is_reported_by_name(monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setenv("OLMPY_CACHE_DIR", str(tmp_path))
    with pytest.raises(build.BuildError, match="Go toolchain is not on PATH: install Go"):
        build.ensure_binaries()
