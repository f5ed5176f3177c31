"""Upstream's catalogd and operator-controller as local processes, flagged as its experimental
manifest deploys them (`manifests/experimental.yaml` of v1.11.0: the ClusterObjectSet applier and
cert-manager webhooks on), with leader election off and every address on loopback.

Both take the same things ours do (`hack.processes`): a kubeconfig, the control plane's CA as the
trust for catalogd's HTTPS server and the registry, and a serving certificate for catalogd issued
by that CA. Metrics are served (upstream requires a certificate for them) but not read: memory and
CPU come from /proc, API requests from the API server's audit log.

Upstream reads its own ServiceAccount from the in-cluster token file at a fixed path, so each
process runs in a mount namespace of its own (`unshare`, as root) with a private `/var/run` holding
that token, taken from its kubeconfig; nothing on the host changes.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from hack.processes import Subprocess
from olm.api import names
from olm_runtime.testing.controlplane import ControlPlane
from olm_runtime.testing.process import free_ports

CATALOGD_GATES = ("APIV1MetasHandler=true",)
OPERATOR_CONTROLLER_GATES = (
    "BoxcutterRuntime=true",
    "BundleReleaseSupport=true",
    "DeploymentConfig=true",
    "SingleOwnNamespaceInstallSupport=true",
    "WebhookProviderCertManager=true",
)


def _serving_pair(plane: ControlPlane, workdir: Path, name: str) -> tuple[Path, Path]:
    pair = plane.certificate_authority().issue(name, common_name=name, hosts=["127.0.0.1", "localhost"])
    directory = workdir / "certs"
    directory.mkdir(parents=True, exist_ok=True)
    shutil.copy(pair.cert_file, directory / "tls.crt")
    shutil.copy(pair.key_file, directory / "tls.key")
    return directory / "tls.crt", directory / "tls.key"


TOKEN_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
_WITH_TOKEN = (
    f'mount -t tmpfs tmpfs /var/run && mkdir -p {TOKEN_DIR} && cp "$0" {TOKEN_DIR}/token && exec "$@"'
)


def _in_own_namespace(kubeconfig: Path, workdir: Path, args: list[str]) -> list[str]:
    """`args` run with the kubeconfig's token where upstream looks for its ServiceAccount token."""
    token = workdir / "token"
    token.write_text(json.loads(kubeconfig.read_text())["users"][0]["user"]["token"])
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", _WITH_TOKEN, str(token), *args]


def _trust(plane: ControlPlane, directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    shutil.copy(plane.ca_file, directory / "ca.crt")
    return directory


@dataclass
class UpstreamCatalogd(Subprocess):
    binary: Path
    control_plane: ControlPlane
    workdir: Path
    kubeconfig: Path
    ports: dict[str, int] = field(default_factory=dict)
    process: subprocess.Popen[bytes] | None = None
    component: str = field(default="upstream-catalogd", init=False)

    def start(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        if not self.ports:
            metrics, health, catalogs, webhook = free_ports(4)
            self.ports = {"metrics": metrics, "health": health, "catalogs": catalogs, "webhook": webhook}
        cert, key = _serving_pair(self.control_plane, self.workdir, "upstream-catalogd")
        args = [
            str(self.binary),
            f"--kubeconfig={self.kubeconfig}",
            f"--metrics-bind-address=127.0.0.1:{self.ports['metrics']}",
            f"--health-probe-bind-address=127.0.0.1:{self.ports['health']}",
            f"--catalogs-server-addr=127.0.0.1:{self.ports['catalogs']}",
            f"--external-address=127.0.0.1:{self.ports['catalogs']}",
            f"--webhook-server-port={self.ports['webhook']}",
            f"--system-namespace={names.DEFAULT_SYSTEM_NAMESPACE}",
            f"--cache-dir={self.workdir / 'cache'}",
            f"--tls-cert={cert}",
            f"--tls-key={key}",
            f"--pull-cas-dir={_trust(self.control_plane, self.workdir / 'pull-cas')}",
            *(f"--feature-gates={gate}" for gate in CATALOGD_GATES),
        ]
        self._launch(_in_own_namespace(self.kubeconfig, self.workdir, args))


@dataclass
class UpstreamOperatorController(Subprocess):
    binary: Path
    control_plane: ControlPlane
    workdir: Path
    kubeconfig: Path
    ports: dict[str, int] = field(default_factory=dict)
    process: subprocess.Popen[bytes] | None = None
    component: str = field(default="upstream-operator-controller", init=False)

    def start(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        if not self.ports:
            metrics, health = free_ports(2)
            self.ports = {"metrics": metrics, "health": health}
        cert, key = _serving_pair(self.control_plane, self.workdir, "upstream-operator-controller")
        trust = _trust(self.control_plane, self.workdir / "cas")
        args = [
            str(self.binary),
            f"--kubeconfig={self.kubeconfig}",
            f"--metrics-bind-address=127.0.0.1:{self.ports['metrics']}",
            f"--health-probe-bind-address=127.0.0.1:{self.ports['health']}",
            f"--system-namespace={names.DEFAULT_SYSTEM_NAMESPACE}",
            f"--cache-path={self.workdir / 'cache'}",
            f"--tls-cert={cert}",
            f"--tls-key={key}",
            f"--catalogd-cas-dir={trust}",
            f"--pull-cas-dir={trust}",
            *(f"--feature-gates={gate}" for gate in OPERATOR_CONTROLLER_GATES),
        ]
        self._launch(_in_own_namespace(self.kubeconfig, self.workdir, args))
