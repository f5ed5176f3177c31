"""OLM v0's olm and catalog operators as processes beside a local control plane.

`running(control_plane, kube, workdir, binary_dir)` is the front door: it installs what v0 needs on
the cluster (`install_prerequisites`: v0's CRDs, the `olm` namespace, the OLMConfig `cluster` with
copied CSVs disabled), starts both operators against the control plane's admin kubeconfig, returns
once each has synced (read from the API, see `olm_ready` and `catalog_ready`), and stops them, with
the catalogs they serve, when the block ends. The binaries are in `binary_dir`, the `test` set's
directory (`olm_testkit.binaries.OLM_V0`).

v0 has no flag for the address of its health and metrics server: it listens on every interface, on
8443 with `--tls-cert` and 8080 without, and only logs a failure to bind. The olm operator is given a
serving certificate from the control plane's CA, as upstream's manifests give it one from
cert-manager, so the two operators do not take each other's port; nothing here reads those ports, so
a second session on the machine runs v0 without its health server rather than failing.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from olm_runtime import conditions
from olm_runtime.client import Client, errors, kinds
from olm_runtime.testing import settle
from olm_runtime.testing.controlplane import ControlPlane
from olm_runtime.testing.poll import eventually
from olm_testkit import processes
from olm_testkit.names import unique
from olm_testkit.olmv0 import catalog as catalogs
from olm_testkit.olmv0 import kinds as v0kinds

OLM = "olm-v0-olm"
CATALOG = "olm-v0-catalog"
CRDS_FILE = "olm-v0-crds.yaml"
FIELD_MANAGER = "olm-v0"
UNUSED_IMAGE = "olm-v0.invalid/unused:never"
"""The catalog operator's images for the Pods it can run (an image catalog's registry Pod, a bundle
unpack Job, the copy-content utility): catalogs here are served by `opm serve` and carry their
bundles inline, so no Pod is meant to run, and one that does cannot pull this."""
GENERATED_BY_THIS_PROJECT = {"olm.operatorframework.io/generator": "hack.crdgen"}
"""The annotation of the CRDs `olm_testkit.crds` installs (OperatorCondition is one of v0's kinds that
OLM v1 serves too)."""
PROBE_CATALOG = "olm-v0-readiness"
DISABLED_COPIED_CSVS = "DisabledCopiedCSVs"
READY_TIMEOUT = 120.0


@dataclass
class OperatorProcess(processes.Subprocess):
    """One of v0's programs as a subprocess: started with the control plane's admin kubeconfig,
    ready once `synced` says so (the log and shutdown are `Subprocess`'s, so a failed test that used
    it prints its log)."""

    control_plane: ControlPlane
    workdir: Path
    component: str
    args: tuple[str, ...]
    synced: Callable[[], Awaitable[bool]]
    ports: dict[str, int] = field(default_factory=dict)
    process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        # The olm operator's controller-runtime half reads only $KUBECONFIG (its --kubeconfig is a Go
        # flag that v0's pflag parsing never sees); the catalog operator takes both.
        self._launch(list(self.args), {"KUBECONFIG": str(self.control_plane.kubeconfig)})

    async def wait_ready(self, timeout: float = READY_TIMEOUT) -> None:
        async def ready() -> bool:
            if self.process is None or self.process.poll() is not None:
                raise AssertionError(f"{self.component} exited:\n{self.log_tail()}")
            return await self.synced()

        try:
            await eventually(ready, what=f"{self.component} to sync", timeout=timeout)
        except AssertionError as error:
            raise AssertionError(f"{error}\n{self.component} log:\n{self.log_tail()}") from None


@dataclass
class OlmV0:
    """OLM v0 on a control plane: its two operators (fields, so the logs of both are in the report
    of a failed test that uses this) and the catalogs served for it."""

    control_plane: ControlPlane
    kube: Client
    workdir: Path
    olm: OperatorProcess
    catalog: OperatorProcess
    probe: str
    """The CatalogSource the catalog operator's readiness is read from (`catalog_ready`)."""
    binary_dir: Path
    """Where v0's binaries are (`olm_testkit.binaries`' test set)."""
    servers: list[catalogs.CatalogServer] = field(default_factory=list)

    async def start(self) -> None:
        """Start both operators and return once each has synced (again after `stop`: the signals
        they sync on are reset first, so none is left from an earlier run)."""
        await clear_olm_config_status(self.kube)
        await create_probe(self.kube, self.probe)
        try:
            for process in (self.olm, self.catalog):
                process.start()
            for process in (self.olm, self.catalog):
                await process.wait_ready()
        finally:
            await delete_probe(self.kube, self.probe)

    def stop(self) -> None:
        """Stop the catalog servers and both operators (SIGTERM, then wait); an unclean exit is
        printed, since a fixture's teardown cannot fail the test that already ran."""
        for process in (*self.servers, self.catalog, self.olm):
            code = process.stop()
            if code not in (0, None, -15):
                print(f"{process.component} exited with {code}:\n{process.log_tail()}")
        self.servers.clear()

    async def serve_catalog(self, catalog_dir: Path) -> str:
        """Serve the FBC in `catalog_dir` with `opm serve` until `stop`; its gRPC address on loopback
        (for `olmv0.create_catalog_source`)."""
        server = catalogs.CatalogServer(
            self.control_plane,
            self.workdir / f"opm-{len(self.servers)}",
            binary=self.binary_dir / catalogs.OPM,
            catalog_dir=catalog_dir,
        )
        self.servers.append(server)
        server.start()
        await server.wait_ready()
        return server.address


def olm_arguments(olm_v0_dir: Path, control_plane: ControlPlane, binary_dir: Path) -> tuple[str, ...]:
    cert, key = processes.serving_pair(control_plane, olm_v0_dir / "certs", OLM, common_name=OLM)
    client_ca = processes.trust_dir(olm_v0_dir / "client-ca", control_plane.ca_file) / "ca.crt"
    return (
        str(binary_dir / OLM),
        f"--namespace={v0kinds.NAMESPACE}",
        f"--tls-cert={cert}",
        f"--tls-key={key}",
        f"--client-ca={client_ca}",
    )


def catalog_arguments(control_plane: ControlPlane, binary_dir: Path) -> tuple[str, ...]:
    return (
        str(binary_dir / CATALOG),
        f"--kubeconfig={control_plane.kubeconfig}",
        f"--namespace={v0kinds.NAMESPACE}",
        f"--configmapServerImage={UNUSED_IMAGE}",
        f"--opmImage={UNUSED_IMAGE}",
        f"--util-image={UNUSED_IMAGE}",
    )


def make(control_plane: ControlPlane, kube: Client, workdir: Path, binary_dir: Path) -> OlmV0:
    """The two operators (not started) for `control_plane`, working in `workdir`, run from
    `binary_dir`."""
    probe = unique(PROBE_CATALOG)
    olm = OperatorProcess(
        control_plane,
        workdir / "olm",
        component=OLM,
        args=olm_arguments(workdir / "olm", control_plane, binary_dir),
        synced=lambda: olm_ready(kube),
        ports={"health": 8443},
    )
    catalog_operator = OperatorProcess(
        control_plane,
        workdir / "catalog",
        component=CATALOG,
        args=catalog_arguments(control_plane, binary_dir),
        synced=lambda: catalog_ready(kube, probe),
        ports={"health": 8080},
    )
    return OlmV0(control_plane, kube, workdir, olm, catalog_operator, probe, binary_dir)


@contextlib.asynccontextmanager
async def running(
    control_plane: ControlPlane, kube: Client, workdir: Path, binary_dir: Path
) -> AsyncIterator[OlmV0]:
    """v0 installed and both operators synced inside the block, run from `binary_dir`; stopped
    after it (the CRDs, the namespace and what v0 installed stay)."""
    missing = [name for name in (OLM, CATALOG, catalogs.OPM, CRDS_FILE) if not (binary_dir / name).is_file()]
    if missing:
        raise FileNotFoundError(
            f"{', '.join(missing)} missing from {binary_dir}: build the test set with "
            "`python -m hack.controlplane build`"
        )
    await install_prerequisites(kube, binary_dir / CRDS_FILE)
    v0 = make(control_plane, kube, workdir, binary_dir)
    try:
        await v0.start()
        yield v0
    finally:
        v0.stop()


# --- what v0 needs on the cluster ---------------------------------------------------------------


def crds(crds_file: Path) -> list[dict[str, Any]]:
    """v0's CRDs as its release ships them (about 1.2 MB of YAML: the C loader reads it)."""
    return [crd for crd in yaml.load_all(crds_file.read_text(), Loader=yaml.CSafeLoader) if crd]


async def install_prerequisites(kube: Client, crds_file: Path, *, timeout: float = 60.0) -> None:
    """v0's CRDs served, its namespace, and the OLMConfig `cluster` with copied CSVs disabled: an
    AllNamespaces OperatorGroup would otherwise copy its CSV into every namespace of the session."""
    for crd in crds(crds_file):
        if await _generated_here(kube, crd["metadata"]["name"]):
            continue  # OLM v1's own copy of a v0 kind: a superset of v0's schema, which other tests use
        await kube.apply(crd, field_manager=FIELD_MANAGER, force=True)
        await settle.crd_served(kube, crd["metadata"]["name"], timeout=timeout)
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": v0kinds.NAMESPACE}}
    await kube.apply(namespace, field_manager=FIELD_MANAGER, force=True)
    config = {
        "apiVersion": v0kinds.OLM_CONFIG.api_version,
        "kind": v0kinds.OLM_CONFIG.kind,
        "metadata": {"name": v0kinds.OLM_CONFIG_NAME},
        "spec": {"features": {"disableCopiedCSVs": True}},
    }
    await kube.apply(config, field_manager=FIELD_MANAGER, force=True)


async def _generated_here(kube: Client, name: str) -> bool:
    try:
        existing = await kube.get(kinds.CUSTOM_RESOURCE_DEFINITION, name)
    except errors.NotFound:
        return False
    annotations = existing["metadata"].get("annotations") or {}
    return all(annotations.get(key) == value for key, value in GENERATED_BY_THIS_PROJECT.items())


# --- readiness, read from the API ---------------------------------------------------------------


async def olm_ready(kube: Client) -> bool:
    """The olm operator reconciles the OLMConfig once its informers have synced: copied CSVs are
    reported disabled with none left over."""
    config = await kube.get(v0kinds.OLM_CONFIG, v0kinds.OLM_CONFIG_NAME)
    return conditions.of(config, DISABLED_COPIED_CSVS).get("status") == "True"


async def clear_olm_config_status(kube: Client) -> None:
    """The olm operator writes the condition only when it changes: one left by an earlier run
    would read as synced at once."""
    await kube.patch_status(v0kinds.OLM_CONFIG, v0kinds.OLM_CONFIG_NAME, {"status": {"conditions": []}})


async def catalog_ready(kube: Client, probe: str) -> bool:
    """The catalog operator writes a CatalogSource's connection state once its workers run: the
    probe's (`create_probe`), whatever state it observed."""
    found = await kube.get(v0kinds.CATALOG_SOURCE, probe, namespace=v0kinds.NAMESPACE)
    return bool(catalogs.observed_state(found))


async def create_probe(kube: Client, name: str) -> None:
    """A new CatalogSource `name` (no state observed yet) whose address nothing listens on (port
    1), for `catalog_ready`."""
    await delete_probe(kube, name)
    probe = catalogs.catalog_source_object(name, "127.0.0.1:1", namespace=v0kinds.NAMESPACE)
    await kube.create(probe)


async def delete_probe(kube: Client, name: str) -> None:
    """The probe is a global catalog that never answers: resolving any Subscription would fail on it."""
    with contextlib.suppress(errors.NotFound):
        await kube.delete(v0kinds.CATALOG_SOURCE, name, namespace=v0kinds.NAMESPACE)
