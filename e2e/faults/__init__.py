"""Fault drills: break a part of the system on purpose, then check an invariant against the API server.

Drills that break the control plane itself run on one of their own (`own_control_plane`, also used
by the cache recovery tests), so their faults disturb no other test; the others start their own
catalogd and operator-controller on the session's plane and stop them at module end.
`conftest.py` provides the `soak` switch (`OLMPY_SOAK=1`, `make soak`: the long variants), the
`figures` fixture that prints each drill's figures at the end of the session, and `kube`, the
session plane's admin client with the OLM CRDs and the system namespace in place.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from olm_runtime.testing.controlplane import ControlPlane, ControlPlaneOptions

__all__ = ["Figures", "own_control_plane"]

Figures = Callable[[Mapping[str, object]], None]
"""Records one drill's figures (name -> value, in the order given) for the session's summary."""


def own_control_plane(binaries: Path, state_dir: Path, *apiserver_args: str) -> Iterator[ControlPlane]:
    """A one-node control plane for one drill module (yield from it in a module-scoped fixture)."""
    plane = ControlPlane(
        ControlPlaneOptions(
            binary_dir=binaries,
            state_dir=state_dir,
            nodes=1,
            tie_to_parent=True,
            apiserver_args=apiserver_args,
        )
    )
    plane.up()
    try:
        yield plane
    finally:
        plane.down()
