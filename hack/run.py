"""`make run`: the local control plane and registry, the OLM CRDs, catalogd, and a demo catalog.

    python -m hack.run up     # start (or reuse) everything and wait until the demo catalog is Serving
    python -m hack.run down   # stop catalogd, then the control plane and the registry

catalogd runs as a local process against the control plane (its log, pid and storage are in the
state directory); the demo catalog `hack/demo/catalog` is built into an image, pushed to the local
registry and named by a ClusterCatalog `demo`. operator-controller joins when its issue lands.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from hack.controlplane import __main__ as controlplane
from hack.controlplane import build
from hack.crdgen import install as crds
from hack.images.layout import catalog_image
from hack.images.registry import Reference, RegistryClient
from olm_runtime import conditions
from olm_runtime.client import Client, GroupVersionKind, errors, load_config
from olm_runtime.testing import process

REPO = Path(__file__).resolve().parents[1]
CLUSTER_CATALOG = GroupVersionKind("olm.operatorframework.io", "v1", "ClusterCatalog")
DEMO_CATALOG = "demo"


def _olm_dir() -> Path:
    return controlplane.state_dir() / "olm"


def _pids_file() -> Path:
    return _olm_dir() / "pids.json"


def _start_catalogd(kubeconfig: Path, ca: Any, port: int) -> int:
    olm = _olm_dir()
    olm.mkdir(parents=True, exist_ok=True)
    pair = ca.issue("catalogd", common_name="catalogd", hosts=["127.0.0.1", "localhost"])
    cas = olm / "registry-cas"
    cas.mkdir(exist_ok=True)
    (cas / "local-ca.crt").write_bytes(ca.cert_pem)
    args = [
        sys.executable, "-m", "olm.catalogd.main",
        f"--kubeconfig={kubeconfig}",
        f"--tls-cert={pair.cert_file}", f"--tls-key={pair.key_file}",
        f"--storage-dir={olm / 'catalogd'}",
        f"--catalogs-server-addr=127.0.0.1:{port}", f"--external-address=127.0.0.1:{port}",
        f"--pull-cas-dir={cas}",
        "--metrics-bind-address=0", "--health-probe-bind-address=0",
        "--system-namespace=default", "--log-format=console",
    ]  # fmt: skip
    return process.spawn(args, log_file=olm / "catalogd.log", tie_to_parent=False, env={**os.environ})


async def _serve_demo(kubeconfig: Path, reference: str) -> dict[str, Any]:
    config = await load_config(kubeconfig=kubeconfig)
    async with await Client.connect(config, field_manager="olm-py-run") as client:
        catalog = {
            "apiVersion": "olm.operatorframework.io/v1",
            "kind": "ClusterCatalog",
            "metadata": {"name": DEMO_CATALOG},
            "spec": {"source": {"type": "Image", "image": {"ref": reference, "pollIntervalMinutes": 5}}},
        }
        await client.apply(catalog, force=True)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            current = await client.get(CLUSTER_CATALOG, DEMO_CATALOG)
            if conditions.is_true((current.get("status") or {}).get("conditions") or [], "Serving"):
                return current
            await asyncio.sleep(0.5)
        raise process.ComponentFailure(
            f"ClusterCatalog {DEMO_CATALOG} is not Serving after 120s; see {_olm_dir() / 'catalogd.log'}"
        )


async def _prepare(kubeconfig: Path) -> None:
    config = await load_config(kubeconfig=kubeconfig)
    async with await Client.connect(config, field_manager="olm-py-run") as client:
        await crds.install(client, field_manager="olm-py-run")


def up() -> int:
    binaries = build.ensure_binaries()
    plane = controlplane.make_control_plane(binaries)
    print(f"control plane ready in {plane.up():.1f}s")
    registry = controlplane.make_registry(plane)
    print(f"registry ready in {registry.up():.1f}s")
    asyncio.run(_prepare(plane.kubeconfig))
    image = catalog_image(REPO / "hack" / "demo" / "catalog")
    reference = Reference.parse(f"{registry.host}/demo/catalog:latest")
    RegistryClient(host=registry.host, ca_file=registry.ca_file).push(image, reference)
    pids = _running()
    if "catalogd" not in pids:
        (port,) = process.free_ports(1)
        pids = {"catalogd": _start_catalogd(plane.kubeconfig, plane.certificate_authority(), port)}
        _pids_file().write_text(json.dumps(pids))
    started = time.monotonic()
    catalog = asyncio.run(_serve_demo(plane.kubeconfig, str(reference)))
    base = catalog["status"]["urls"]["base"]
    print(f"ClusterCatalog {DEMO_CATALOG} Serving in {time.monotonic() - started:.1f}s")
    print(f"""
kubeconfig:  export KUBECONFIG={plane.kubeconfig}
catalogd:    log {_olm_dir() / "catalogd.log"}

Try:
  kubectl get clustercatalogs
  curl --cacert {plane.ca_file} {base}/api/v1/all
  curl --cacert {plane.ca_file} '{base}/api/v1/metas?schema=olm.channel'
Stop:  make cluster-down""")
    return 0


def _running() -> dict[str, int]:
    try:
        pids: dict[str, int] = json.loads(_pids_file().read_text())
    except (FileNotFoundError, ValueError):
        return {}
    return {name: pid for name, pid in pids.items() if process.is_alive(pid)}


def down() -> int:
    for pid in _running().values():
        process.stop(pid)
    with contextlib.suppress(FileNotFoundError):
        _pids_file().unlink()
    return controlplane.cmd_down()


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m hack.run", description=__doc__)
    parser.add_argument("command", choices=("up", "down"))
    command = parser.parse_args().command
    try:
        return up() if command == "up" else down()
    except (build.BuildError, process.ComponentFailure, errors.APIError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
