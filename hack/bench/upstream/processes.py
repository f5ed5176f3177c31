"""Upstream's catalogd and operator-controller as local processes, flagged as its experimental
manifest deploys them (`manifests/experimental.yaml` of v1.11.0: the ClusterObjectSet applier and
cert-manager webhooks on), with leader election off and every address on loopback.

Both take the same things ours do (`olm_testkit.processes`): a kubeconfig, the control plane's CA as the
trust for catalogd's HTTPS server and the registry, and a serving certificate for catalogd issued
by that CA. Metrics are served (upstream requires a certificate for them) but not read: memory and
CPU come from /proc, API requests from the API server's audit log.

Upstream reads its own ServiceAccount from the in-cluster token file at a fixed path, so each
process runs in a mount namespace of its own (`unshare`, as root) with a private `/var/run` holding
that token, taken from its kubeconfig; nothing on the host changes.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from olm.api import names
from olm_runtime.testing.controlplane import ControlPlane
from olm_runtime.testing.process import free_ports
from olm_testkit.processes import Subprocess, serving_pair, trust_dir

CATALOGD_GATES = ("APIV1MetasHandler=true",)
OPERATOR_CONTROLLER_GATES = (
    "BoxcutterRuntime=true",
    "BundleReleaseSupport=true",
    "DeploymentConfig=true",
    "SingleOwnNamespaceInstallSupport=true",
    "WebhookProviderCertManager=true",
)


TOKEN_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
_WITH_TOKEN = (
    f'mount -t tmpfs tmpfs /var/run && mkdir -p {TOKEN_DIR} && cp "$0" {TOKEN_DIR}/token && exec "$@"'
)


@dataclass
class _Upstream(Subprocess):
    """What both upstream processes take and how they start; subclasses name their ports and add
    their own flags."""

    binary: Path
    control_plane: ControlPlane
    workdir: Path
    kubeconfig: Path
    ports: dict[str, int] = field(default_factory=dict)
    process: subprocess.Popen[bytes] | None = None
    PORTS: ClassVar[tuple[str, ...]] = ("metrics", "health")

    def _flags(self) -> list[str]:
        raise NotImplementedError

    def start(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        if not self.ports:
            self.ports = dict(zip(self.PORTS, free_ports(len(self.PORTS)), strict=True))
        cert, key = serving_pair(
            self.control_plane, self.workdir / "certs", self.component, common_name=self.component
        )
        args = [
            str(self.binary),
            f"--kubeconfig={self.kubeconfig}",
            f"--metrics-bind-address=127.0.0.1:{self.ports['metrics']}",
            f"--health-probe-bind-address=127.0.0.1:{self.ports['health']}",
            f"--system-namespace={names.DEFAULT_SYSTEM_NAMESPACE}",
            f"--tls-cert={cert}",
            f"--tls-key={key}",
            *self._flags(),
        ]
        token = self.workdir / "token"
        token.write_text(json.loads(self.kubeconfig.read_text())["users"][0]["user"]["token"])
        self._launch(
            ["unshare", "--mount", "--propagation", "private", "sh", "-c", _WITH_TOKEN, str(token), *args]
        )


@dataclass
class UpstreamCatalogd(_Upstream):
    component: str = field(default="upstream-catalogd", init=False)
    PORTS: ClassVar[tuple[str, ...]] = ("metrics", "health", "catalogs", "webhook")

    def _flags(self) -> list[str]:
        return [
            f"--catalogs-server-addr=127.0.0.1:{self.ports['catalogs']}",
            f"--external-address=127.0.0.1:{self.ports['catalogs']}",
            f"--webhook-server-port={self.ports['webhook']}",
            f"--cache-dir={self.workdir / 'cache'}",
            f"--pull-cas-dir={trust_dir(self.workdir / 'pull-cas', self.control_plane.ca_file)}",
            *(f"--feature-gates={gate}" for gate in CATALOGD_GATES),
        ]


@dataclass
class UpstreamOperatorController(_Upstream):
    component: str = field(default="upstream-operator-controller", init=False)

    def _flags(self) -> list[str]:
        trust = trust_dir(self.workdir / "cas", self.control_plane.ca_file)
        return [
            f"--cache-path={self.workdir / 'cache'}",
            f"--catalogd-cas-dir={trust}",
            f"--pull-cas-dir={trust}",
            *(f"--feature-gates={gate}" for gate in OPERATOR_CONTROLLER_GATES),
        ]
