"""`make run`: the local control plane and registry, cert-manager, the OLM CRDs, catalogd,
operator-controller, a demo catalog of real packages, and one extension installed from it.

    python -m hack.run up              # OLM deployed in the cluster (needs root); ends when the
                                       # demo extension is Installed
    python -m hack.run up --nodes 3    # with three real nodes (two by default)
    python -m hack.run up --processes  # catalogd and operator-controller as local processes
    python -m hack.run down            # stop everything `up` started, in either mode

In the default mode OLM runs as users run it: real kubelet nodes (two unless `--nodes` says)
join the control plane beside the kwok nodes, the OLM image is built here (hack/image) and pushed
to the local registry, and `manifests/` is applied as shipped with only the image set
(hack/deploy): catalogd (2 replicas, one per node, its label webhook registered) and
operator-controller run as Pods on the real nodes, with certificates from cert-manager. With
`--processes` (`make run-processes`, for fast iteration) catalogd and operator-controller run as
local processes against the control plane (their logs, pids and storage are in the state
directory). The demo catalog is built from `../shared/realdata`
(the community catalog's kube-green and cat-facts-operator packages, their bundles pushed to the
local registry) and named by a ClusterCatalog `demo`. The ClusterExtension `kube-green` installs
kube-green (a bundle with a webhook, so cert-manager issues its certificate) into the namespace
`kube-green`, applied as the ServiceAccount `kube-green-installer`; for brevity that account is
bound to cluster-admin here (docs/operator-controller/permissions.md shows how to scope it).
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

from hack import demo
from hack.controlplane import __main__ as controlplane
from olm.api import names
from olm.api.kinds import CLUSTER_CATALOG, CLUSTER_EXTENSION
from olm_runtime import conditions
from olm_runtime.client import Client, GroupVersionKind, errors, load_config
from olm_runtime.testing import process
from olm_runtime.testing.controlplane import ControlPlane
from olm_runtime.testing.registry import Registry
from olm_testkit import binaries, crds, nodenet
from olm_testkit import node as real_nodes
from olm_testkit.certmanager import CertManager
from olm_testkit.deploy import install as deploy
from olm_testkit.image import build as image_build
from olm_testkit.images import realdata
from olm_testkit.images.registry import RegistryClient
from olm_testkit.node import NodeOptions, RealNode
from olm_testkit.nodenet import NodeNetwork

REPO = Path(__file__).resolve().parents[1]
DEMO_CATALOG = "demo"
DEMO_PACKAGES = ("kube-green", "cat-facts-operator")
DEMO_EXTENSION = demo.EXTENSION
DEMO_NAMESPACE = demo.NAMESPACE
FIELD_MANAGER = "olm-py-run"


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


def _start_operator_controller(kubeconfig: Path, ca_file: Path) -> int:
    olm = _olm_dir()
    cas = olm / "catalogd-cas"
    cas.mkdir(parents=True, exist_ok=True)
    (cas / "local-ca.crt").write_bytes(ca_file.read_bytes())
    args = [
        sys.executable, "-m", "olm.operator_controller.main",
        f"--kubeconfig={kubeconfig}",
        f"--cache-dir={olm / 'operator-controller'}",
        f"--catalogd-cas-dir={cas}", f"--pull-cas-dir={olm / 'registry-cas'}",
        f"--system-namespace={names.DEFAULT_SYSTEM_NAMESPACE}",
        "--metrics-bind-address=0", "--health-probe-bind-address=0", "--log-format=console",
    ]  # fmt: skip
    return process.spawn(
        args, log_file=olm / "operator-controller.log", tie_to_parent=False, env={**os.environ}
    )


def _logs_hint(component: str, *, processes: bool) -> str:
    if processes:
        return str(_olm_dir() / f"{component}.log")
    return f"kubectl -n {names.DEFAULT_SYSTEM_NAMESPACE} logs deploy/{component}-controller-manager"


async def _wait(client: Client, gvk: GroupVersionKind, name: str, condition: str, log: str) -> dict[str, Any]:
    deadline = time.monotonic() + 300
    current: dict[str, Any] = {}
    while time.monotonic() < deadline:
        current = dict(await client.get(gvk, name))
        if conditions.is_true((current.get("status") or {}).get("conditions") or [], condition):
            return current
        await asyncio.sleep(0.5)
    raise process.ComponentFailure(
        f"{gvk.kind} {name} is not {condition} after 300s; status:\n"
        f"{json.dumps(current.get('status'), indent=1)}\nsee {log}"
    )


async def _serve_demo(client: Client, reference: str, *, processes: bool) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": DEMO_CATALOG}
    if processes:
        # In a cluster catalogd's webhook adds the name label; local processes register no webhook.
        metadata["labels"] = {names.METADATA_NAME_LABEL: DEMO_CATALOG}
    catalog = {
        "apiVersion": CLUSTER_CATALOG.api_version,
        "kind": CLUSTER_CATALOG.kind,
        "metadata": metadata,
        "spec": {"source": {"type": "Image", "image": {"ref": reference, "pollIntervalMinutes": 5}}},
    }
    await client.apply(catalog, force=True)
    hint = _logs_hint("catalogd", processes=processes)
    return await _wait(client, CLUSTER_CATALOG, DEMO_CATALOG, "Serving", hint)


async def _install_demo(client: Client, *, processes: bool) -> dict[str, Any]:
    objects = demo.extension_objects(catalog=DEMO_CATALOG)
    for obj in objects:
        await client.apply(obj, force=True)
    hint = _logs_hint("operator-controller", processes=processes)
    return await _wait(client, CLUSTER_EXTENSION, DEMO_EXTENSION, "Installed", hint)


def _print_status(extension: dict[str, Any]) -> None:
    status = extension.get("status") or {}
    bundle = (status.get("install") or {}).get("bundle") or {}
    print(f"ClusterExtension {DEMO_EXTENSION}: installed {bundle.get('name')} ({bundle.get('version')})")
    for condition in status.get("conditions") or ():
        print(
            f"  {condition['type']:<18} {condition['status']:<8} {condition['reason']:<24} "
            f"{condition['message']}"
        )
    for revision in status.get("activeRevisions") or ():
        print(f"  revision {revision['name']}")


async def _demo(
    kubeconfig: Path, reference: str, *, processes: bool
) -> tuple[dict[str, Any], dict[str, Any], float, float]:
    config = await load_config(kubeconfig=kubeconfig)
    async with await Client.connect(config, field_manager=FIELD_MANAGER) as client:
        started = time.monotonic()
        catalog = await _serve_demo(client, reference, processes=processes)
        serving = time.monotonic() - started
        started = time.monotonic()
        extension = await _install_demo(client, processes=processes)
        return catalog, extension, serving, time.monotonic() - started


async def _prepare(kubeconfig: Path) -> None:
    config = await load_config(kubeconfig=kubeconfig)
    async with await Client.connect(config, field_manager=FIELD_MANAGER) as client:
        await crds.install_with_system_namespace(client, field_manager=FIELD_MANAGER)


def _mode_file() -> Path:
    return controlplane.state_dir() / "mode"


def _start_cluster(
    binaries: Path, *, processes: bool, nodes: int
) -> tuple[ControlPlane, Registry, list[RealNode]]:
    """The control plane and registry (loopback for processes; on the first node network otherwise)
    and, unless processes run OLM, the real nodes."""
    previous_mode = _mode_file().read_text().strip() if _mode_file().exists() else None
    mode = "processes" if processes else "cluster"
    if previous_mode is not None and previous_mode != mode:
        print(f"stopping the running {previous_mode} mode first")
        down()
    controlplane.state_dir().mkdir(parents=True, exist_ok=True)
    _mode_file().write_text(mode)
    node_networks: list[NodeNetwork] = []
    if not processes:
        # Before anything starts: a missing package or binary is named, not met halfway through.
        real_nodes.check_prerequisites(binaries)
        node_networks = real_nodes.networks.prepare(controlplane.state_dir(), nodes, reuse=True)
    plane = controlplane.make_control_plane(
        binaries, address=node_networks[0].host_ip if node_networks else "127.0.0.1"
    )
    print(f"control plane ready in {plane.up():.1f}s")
    registry = controlplane.make_registry(plane)
    print(f"registry ready in {registry.up():.1f}s")
    started = []
    for network in node_networks:
        node = _make_node(plane, network, binaries)
        print(f"real node {node.name} Ready in {node.up():.1f}s")
        started.append(node)
    return plane, registry, started


def _make_node(plane: ControlPlane, network: NodeNetwork, binaries: Path) -> RealNode:
    return RealNode(
        NodeOptions(
            binary_dir=binaries,
            state_dir=real_nodes.networks.state_dir(controlplane.state_dir(), network),
            network=network,
            owner=controlplane.state_dir(),
            kubeconfig=plane.kubeconfig,
            server=plane.server,
            ca=plane.certificate_authority(),
        )
    )


async def _deploy(plane: ControlPlane, image: str) -> deploy.Deployed:
    config = await load_config(kubeconfig=plane.kubeconfig)
    async with await Client.connect(config, field_manager=FIELD_MANAGER) as client:
        return await deploy.install(
            client,
            image=image,
            registry_cas=[plane.certificate_authority().cert_pem],
            namespace_annotations=real_nodes.placement_annotations(),
        )


def up(*, processes: bool = False, nodes: int = 2) -> int:
    binary_dir = binaries.ensure_binaries("run")
    plane, registry, started_nodes = _start_cluster(binary_dir, processes=processes, nodes=nodes)
    asyncio.run(_prepare(plane.kubeconfig))
    cert_manager = CertManager(plane, controlplane.state_dir() / "cert-manager")
    print(f"cert-manager ready in {asyncio.run(cert_manager.up()):.1f}s")
    pusher = RegistryClient(host=registry.host, ca_file=registry.ca_file)
    if started_nodes:
        started = time.monotonic()
        image = image_build.build_and_push(registry_host=registry.host, ca_file=registry.ca_file, tag="dev")
        sizes = (
            f"{image.compressed_size / 2**20:.1f} MiB compressed, {image.unpacked_size / 2**20:.1f} unpacked"
        )
        print(f"OLM image {image.digest_ref} built and pushed in {time.monotonic() - started:.1f}s ({sizes})")
        deployed = asyncio.run(_deploy(plane, image.digest_ref))
        for name, seconds in deployed.seconds.items():
            print(f"Deployment {names.DEFAULT_SYSTEM_NAMESPACE}/{name} rolled out in {seconds:.1f}s")
    started = time.monotonic()
    published = realdata.publish_community_catalog(
        pusher, registry.host, packages=DEMO_PACKAGES, repository_prefix="demo"
    )
    print(f"demo catalog ({', '.join(DEMO_PACKAGES)}) published in {time.monotonic() - started:.1f}s")
    if processes:
        pids = _running()
        if "catalogd" not in pids:
            (port,) = process.free_ports(1)
            pids["catalogd"] = _start_catalogd(plane.kubeconfig, plane.certificate_authority(), port)
        if "operator-controller" not in pids:
            pids["operator-controller"] = _start_operator_controller(plane.kubeconfig, plane.ca_file)
        _pids_file().write_text(json.dumps(pids))
    catalog, extension, serving, installing = asyncio.run(
        _demo(plane.kubeconfig, published.ref, processes=processes)
    )
    base = catalog["status"]["urls"]["base"]
    print(f"ClusterCatalog {DEMO_CATALOG} Serving in {serving:.1f}s")
    print(f"ClusterExtension {DEMO_EXTENSION} Installed in {installing:.1f}s")
    _print_status(extension)
    if processes:
        olm = _olm_dir()
        where = f"""logs:        {olm / "catalogd.log"}
             {olm / "operator-controller.log"}"""
        content = f"curl --cacert {plane.ca_file} '{base}/api/v1/metas?schema=olm.package'"
    else:
        system = names.DEFAULT_SYSTEM_NAMESPACE
        where = f"""OLM:         kubectl -n {system} get pods -o wide
logs:        kubectl -n {system} logs deploy/operator-controller-controller-manager"""
        content = (
            f"kubectl get --raw '/api/v1/namespaces/{system}/services/https:catalogd-service:https/proxy"
            f"/catalogs/{DEMO_CATALOG}/api/v1/metas?schema=olm.package'"
        )
    print(f"""
kubeconfig:  export KUBECONFIG={plane.kubeconfig}
{where}

Try:
  kubectl get nodes
  kubectl get clustercatalogs,clusterextensions,clusterobjectsets
  kubectl get clusterextension {DEMO_EXTENSION} -o yaml
  kubectl -n {DEMO_NAMESPACE} get deployments,certificates,issuers
  {content}
Stop:  make cluster-down""")
    return 0


def _running() -> dict[str, int]:
    try:
        pids: dict[str, int] = json.loads(_pids_file().read_text())
    except (FileNotFoundError, ValueError):
        return {}
    return {name: pid for name, pid in pids.items() if process.is_alive(pid)}


def down() -> int:
    running = _running()
    for name in ("operator-controller", "catalogd"):
        if name in running:
            process.stop(running[name])
    with contextlib.suppress(FileNotFoundError):
        _pids_file().unlink()
    plane = controlplane.make_control_plane(binaries.binary_dir("run"))
    CertManager(plane, controlplane.state_dir() / "cert-manager").stop()
    # The nodes first (a kubelet left running would only retry against a stopped API server);
    # their networks last, once nothing listens on them.
    node_networks = real_nodes.networks.stop_nodes(controlplane.state_dir())
    result = controlplane.cmd_down()
    real_nodes.networks.release(node_networks)
    _mode_file().unlink(missing_ok=True)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(
        prog="python -m hack.run", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("command", choices=("up", "down"))
    parser.add_argument(
        "--processes",
        action="store_true",
        help="run catalogd and operator-controller as local processes instead of Pods on real nodes",
    )
    parser.add_argument(
        "--nodes",
        type=int,
        default=2,
        choices=range(1, nodenet.MAX_NODES + 1),
        metavar="N",
        help="how many real nodes OLM's Pods spread over (default 2; ignored with --processes)",
    )
    args = parser.parse_args()
    try:
        return up(processes=args.processes, nodes=args.nodes) if args.command == "up" else down()
    except (
        binaries.BuildError,
        process.ComponentFailure,
        errors.APIError,
        deploy.DeploymentFailed,
        image_build.ImageBuildError,
    ) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
