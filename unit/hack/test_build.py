"""The control-plane build: cache key follows the pins, a missing toolchain is named."""

from __future__ import annotations

import pytest

from hack.controlplane import build


def test_cache_directory_names_the_kubernetes_release_and_the_pins() -> None:
    directory = build.binary_dir()
    assert directory.name.startswith(build.kubernetes_version() + "-")
    assert directory.name.endswith(build.pin_key())
    assert build.kubernetes_version().startswith("v1.")


def test_missing_go_toolchain_is_reported_by_name(monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setenv("OLMPY_CACHE_DIR", str(tmp_path))
    with pytest.raises(build.BuildError, match="Go toolchain is not on PATH: install Go"):
        build.ensure_binaries()
