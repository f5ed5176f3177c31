"""OLM's binaries: built with the runtime's machinery into its cache, in two sets (what `make run`
starts, and everything the tests use), with nothing built twice."""

from __future__ import annotations

from pathlib import Path

import pytest

from olm_runtime.testing import binaries as runtime
from olm_testkit import binaries as build


def test_the_run_set_is_what_make_run_starts_and_the_test_set_adds_the_test_tools() -> None:
    run = {name for target in build.SETS["run"] for name in target.outputs}
    test = {name for target in build.SETS["test"] for name in target.outputs}
    control_plane = {name for target in runtime.CONTROL_PLANE for name in target.outputs}
    node = {"kubelet", "kube-proxy", "coredns", "pause"}
    cert_manager = {"cert-manager-controller", "cert-manager-cainjector", build.CERT_MANAGER_CRDS_FILE}
    assert run == control_plane | node | cert_manager
    olm_v0 = {"olm-v0-olm", "olm-v0-catalog", "opm", build.OLM_V0_CRDS_FILE}
    assert test - run == {"otelcol", "promtool", "operator-condition", "cosign", "toxiproxy-server"} | olm_v0
    assert set(build.OUTPUTS) == test
    assert len(set(build.OUTPUTS)) == len(build.OUTPUTS)


def test_the_control_plane_targets_are_the_runtimes_own() -> None:
    for targets in build.SETS.values():
        assert targets[: len(runtime.CONTROL_PLANE)] == runtime.CONTROL_PLANE


def test_kubelet_and_kube_proxy_come_from_the_runtimes_kubernetes_module() -> None:
    node = build.KUBERNETES_NODE
    assert node.module_dir == runtime.KUBERNETES.module_dir
    assert node.stamp_kubernetes_version
    assert node.binaries == ("kubelet", "kube-proxy")
    assert not set(node.binaries) & set(runtime.KUBERNETES.binaries)
    assert build.target_key(node) != build.target_key(runtime.KUBERNETES)
    assert node.name != runtime.KUBERNETES.name


def test_olms_own_modules_are_here_and_the_control_planes_are_not() -> None:
    assert sorted(p.name for p in build.GOMOD_DIR.iterdir()) == [
        "certmanager",
        "coredns",
        "cosign",
        "olmv0",
        "operatorcondition",
        "otelcol",
        "pause",
        "promtool",
        "toxiproxy",
    ]
    for target in build.TARGETS:
        assert (target.module_dir / "go.mod").is_file(), target.name


def test_each_set_has_a_directory_of_its_own_in_the_runtimes_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OLMPY_CACHE_DIR", raising=False)
    run, test = build.binary_dir("run"), build.binary_dir("test")
    assert run.parent == test.parent == runtime.cache_root()
    assert run != test
    assert test.name == f"{build.kubernetes_version()}-{build.combined_key(build.target_keys(build.TARGETS))}"


def test_olmpy_cache_dir_moves_the_binaries_too(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OLMPY_CACHE_DIR", str(tmp_path))
    assert build.binary_dir().parent == tmp_path / "bin"


def test_missing_go_toolchain_is_reported_by_name(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setenv("OLMPY_CACHE_DIR", str(tmp_path))
    with pytest.raises(build.BuildError, match="Go toolchain is not on PATH: install Go"):
        build.ensure_binaries("run")
