"""Peers the runtime benchmarks compare against, built from package registries like the control plane.

`ensure_controller_runtime_peer()` builds `controller-runtime/` (a small Go program on a pinned
controller-runtime) once into the binary cache and returns its path. kopf, the Python peer, is a
dependency of the `bench` group.
"""

from __future__ import annotations

from pathlib import Path

from olm_testkit import binaries

CONTROLLER_RUNTIME_DIR = Path(__file__).resolve().parent / "controller-runtime"


def ensure_controller_runtime_peer() -> Path:
    binary = (
        binaries.cache_root() / f"peers-{binaries.pin_key(CONTROLLER_RUNTIME_DIR)}" / "controllerruntime-peer"
    )
    if not binary.is_file():
        binary.parent.mkdir(parents=True, exist_ok=True)
        binaries.go_build(CONTROLLER_RUNTIME_DIR, (".",), binary)
    return binary
