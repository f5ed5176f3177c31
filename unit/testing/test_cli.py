"""`python -m olm_runtime.testing` without a running control plane or a Go build: what it says and
its exit codes (starting one is
`e2e/runtime/test_distribution.py::test_module_starts_a_control_plane_for_the_user`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from olm_runtime.testing import binaries
from olm_runtime.testing.__main__ import main


def test_up_without_binaries_or_go_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("OLMPY_ASSETS", raising=False)
    monkeypatch.setenv("OLM_RUNTIME_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PATH", "/nonexistent")
    state = tmp_path / "state"
    assert main(["up", f"--state-dir={state}"]) == 1
    error = capsys.readouterr().err
    assert "Go toolchain is not on PATH: install Go" in error
    assert "OLMPY_ASSETS" in error
    assert not state.exists()  # nothing was started or written


def test_binaries_prints_the_directory_of_binaries_already_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OLM_RUNTIME_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("PATH", "/nonexistent")
    for target in binaries.CONTROL_PLANE:
        directory = binaries.target_dir(tmp_path, target.name, binaries.target_key(target))
        directory.mkdir(parents=True)
        for name in target.outputs:
            (directory / name).write_text(name)
    assert main(["binaries", "--no-build"]) == 0
    assert capsys.readouterr().out == f"{binaries.assembled_dir(binaries.CONTROL_PLANE, tmp_path)}\n"
    assert main(["binaries"]) == 0  # found again, built by nobody
    assert capsys.readouterr().out == f"{binaries.assembled_dir(binaries.CONTROL_PLANE, tmp_path)}\n"


def test_binaries_without_build_names_what_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OLM_RUNTIME_CACHE_DIR", str(tmp_path))
    assert main(["binaries", "--no-build"]) == 1
    error = capsys.readouterr().err
    assert "not built yet" in error
    assert "kube-apiserver" in error


def test_status_of_a_state_dir_never_started_is_down(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["status", f"--state-dir={tmp_path / 'none'}"]) == 1
    assert capsys.readouterr().out == "control plane: down\n"


def test_down_of_a_state_dir_never_started_does_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["down", f"--state-dir={tmp_path / 'none'}"]) == 0
    assert capsys.readouterr().out == "control plane stopped\n"
    assert not (tmp_path / "none").exists()
