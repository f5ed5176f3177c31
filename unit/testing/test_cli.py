"""`python -m olm_runtime.testing` without a running control plane: what it says and its exit codes
(starting one is `e2e/runtime/test_distribution.py::test_module_starts_a_control_plane_for_the_user`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from olm_runtime.testing.__main__ import main


def test_up_without_binaries_says_where_to_get_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("OLMPY_ASSETS", raising=False)
    assert main(["up", f"--state-dir={tmp_path}"]) == 2
    assert "--binaries or $OLMPY_ASSETS" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []  # nothing was started or written


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
