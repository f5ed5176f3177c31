"""The harness itself: idempotent up, stale state cleaned, crashes reported, nothing left running."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from olm_runtime.testing import process
from olm_runtime.testing.controlplane import ControlPlane, ControlPlaneOptions


def _options(binaries: Path, state_dir: Path, *, apiserver_args: tuple[str, ...] = ()) -> ControlPlaneOptions:
    return ControlPlaneOptions(
        binary_dir=binaries, state_dir=state_dir, nodes=1, tie_to_parent=True, apiserver_args=apiserver_args
    )


def test_a_crashing_component_is_reported_with_its_log_and_the_rest_is_stopped(
    control_plane_binaries: Path, tmp_path: Path
) -> None:
    plane = ControlPlane(
        _options(control_plane_binaries, tmp_path / "cp", apiserver_args=("--no-such-flag",))
    )
    with pytest.raises(process.ComponentFailure) as failure:
        plane.up()
    message = str(failure.value)
    assert "kube-apiserver" in message
    assert "unknown flag: --no-such-flag" in message
    leftover = [p for p in _pids_of(tmp_path / "cp") if process.is_alive(p)]
    assert leftover == []


def _pids_of(state_dir: Path) -> list[int]:
    """Pids of processes whose command line mentions the state directory (etcd's data dir, flags)."""
    pids = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if str(state_dir) in (proc / "cmdline").read_bytes().decode(errors="replace"):
                    pids.append(int(proc.name))
            except OSError:
                continue
    return pids


def test_up_cleans_a_stale_state_dir_is_idempotent_and_down_leaves_nothing(
    control_plane_binaries: Path, tmp_path: Path
) -> None:
    state_dir = tmp_path / "cp"
    state_dir.mkdir()
    (state_dir / "state.json").write_text(json.dumps({"ports": {"etcd": 1}, "pids": {"etcd": 2**22 - 1}}))
    (state_dir / "leftover-from-a-crash").write_text("junk")
    plane = ControlPlane(_options(control_plane_binaries, state_dir))
    try:
        plane.up()
        assert not (state_dir / "leftover-from-a-crash").exists()
        server, pids = plane.server, dict(json.loads((state_dir / "state.json").read_text())["pids"])
        assert plane.rest.raw("GET", "/readyz")[0] == 200

        again = ControlPlane(_options(control_plane_binaries, state_dir))
        again.up()
        assert again.server == server
        assert json.loads((state_dir / "state.json").read_text())["pids"] == pids
        ports = list(plane.ports.values())
    finally:
        plane.down()
    assert not any(process.port_is_listening(port) for port in ports)
    assert [p for p in _pids_of(state_dir) if process.is_alive(p)] == []
