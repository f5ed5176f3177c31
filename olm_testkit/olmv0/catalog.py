"""Catalogs for OLM v0 without Pods: `opm serve` on the host, and CatalogSources naming its address.

In a cluster v0 runs a registry Pod per image-based CatalogSource; a CatalogSource of `sourceType:
grpc` with `spec.address` instead names a server that already runs, and the catalog operator only
connects to it. Here that server is `opm serve DIR` of the pinned operator-registry, on a free port.
opm listens on every interface (`-p` takes a port only) and its startup profiler, on a fixed
`localhost:6060` by default, is turned off so that two servers can run at once.

`validate(opm, directory)` runs `opm validate`, the check upstream's catalog builds run.
"""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from olm_runtime.client import Client, errors
from olm_runtime.testing.controlplane import ControlPlane
from olm_runtime.testing.poll import eventually
from olm_runtime.testing.process import free_ports
from olm_testkit import processes
from olm_testkit.olmv0 import kinds

OPM = "opm"
READY = "READY"
"""`status.connectionState.lastObservedState` once the catalog operator's gRPC connection is up."""
FIELD_MANAGER = "olm-v0-catalogs"


@dataclass
class CatalogServer(processes.Subprocess):
    """`opm serve` of one FBC directory; `address` is where a CatalogSource finds it."""

    control_plane: ControlPlane
    workdir: Path
    binary: Path
    catalog_dir: Path
    ports: dict[str, int] = field(default_factory=dict)
    process: subprocess.Popen[bytes] | None = None
    component: str = field(default="opm-serve", init=False)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.ports['grpc']}"

    def start(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        if not self.ports:
            self.ports = {"grpc": free_ports(1)[0]}
        args = [
            str(self.binary),
            "serve",
            str(self.catalog_dir),
            f"--port={self.ports['grpc']}",
            "--pprof-addr=",
            # In the work directory rather than a temporary one of opm's; built at startup, as
            # it is when no cache was prepared (a given directory is otherwise checked, not built).
            f"--cache-dir={self.workdir / 'cache'}",
            "--cache-enforce-integrity=false",
            f"--termination-log={self.workdir / 'termination.log'}",
        ]
        self._launch(args)

    async def wait_ready(self, timeout: float = 60.0) -> None:
        """Until the gRPC port accepts connections: opm listens only once it has loaded the catalog."""

        async def answers() -> bool:
            if self.process is None or self.process.poll() is not None:
                raise AssertionError(f"opm serve {self.catalog_dir} exited:\n{self.log_tail()}")
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", self.ports["grpc"])
            except OSError:
                return False
            writer.close()
            await writer.wait_closed()
            return True

        await eventually(answers, what=f"opm to serve {self.catalog_dir}", timeout=timeout)


def validate(opm: Path, catalog_dir: Path) -> None:
    """`opm validate`: raise with opm's report if the FBC in `catalog_dir` is not valid."""
    result = subprocess.run(
        [str(opm), "validate", str(catalog_dir)], capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        raise AssertionError(f"opm validate {catalog_dir} failed:\n{result.stdout}{result.stderr}")


def catalog_source_object(name: str, address: str, *, namespace: str = kinds.NAMESPACE) -> dict[str, Any]:
    """A CatalogSource of `sourceType: grpc` whose server is already running at `address`."""
    return {
        "apiVersion": kinds.CATALOG_SOURCE.api_version,
        "kind": kinds.CATALOG_SOURCE.kind,
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"sourceType": "grpc", "address": address, "displayName": name, "publisher": "olm-py tests"},
    }


def observed_state(catalog_source: dict[str, Any]) -> str:
    """`status.connectionState.lastObservedState` ("" before the catalog operator connects)."""
    state = (catalog_source.get("status") or {}).get("connectionState") or {}
    return str(state.get("lastObservedState") or "")


async def create_catalog_source(
    kube: Client, name: str, address: str, *, namespace: str = kinds.NAMESPACE, timeout: float = 60.0
) -> dict[str, Any]:
    """Create CatalogSource `namespace/name` for the server at `address` (in the `olm` namespace it
    serves Subscriptions of every namespace) and return it once the catalog operator's connection is
    READY."""
    await kube.apply(catalog_source_object(name, address, namespace=namespace), field_manager=FIELD_MANAGER)
    found: dict[str, Any] = {}

    async def ready() -> bool:
        nonlocal found
        found = await kube.get(kinds.CATALOG_SOURCE, name, namespace=namespace)
        return observed_state(found) == READY

    try:
        await eventually(ready, what=f"CatalogSource {namespace}/{name} to be {READY}", timeout=timeout)
    except AssertionError as error:
        raise AssertionError(f"{error}; status: {found.get('status')}") from None
    return found


async def delete_catalog_source(kube: Client, name: str, *, namespace: str = kinds.NAMESPACE) -> None:
    with contextlib.suppress(errors.NotFound):
        await kube.delete(kinds.CATALOG_SOURCE, name, namespace=namespace)
