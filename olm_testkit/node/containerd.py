"""containerd with runc, the node's container runtime: its configuration, command line and the `ctr`
commands the node runs against it.

Root may not lower `oom_score_adj` on this kind of VM, so the CRI plugin restricts it (without that
every sandbox fails with "can't get final child's PID from pipe"); runc keeps its state under the
node's directory, not the machine-wide /run/containerd/runc; the sandbox image is the one built here
(`sandbox`). containerd's registry client falls back to the system's trust store on any failure of a
per-registry setting (a 404 for a missing tag came back as an x509 error), so the cluster's CA is
trusted process-wide instead (`ca_bundle`, given as `SSL_CERT_FILE`).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from olm_runtime.testing import process
from olm_testkit.node import cni
from olm_testkit.node.layout import NodeLayout
from olm_testkit.node.sandbox import SANDBOX_IMAGE

SYSTEM_CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")


def config(layout: NodeLayout) -> str:
    state = layout.containerd_dir
    cri = 'plugins."io.containerd.grpc.v1.cri"'
    return "\n".join(
        [
            "version = 2",
            f'root = "{state / "root"}"',
            f'state = "{state / "state"}"',
            "[grpc]",
            f'  address = "{layout.containerd_socket}"',
            f"[{cri}]",
            f'  sandbox_image = "{SANDBOX_IMAGE}"',
            "  restrict_oom_score_adj = true",
            f"[{cri}.containerd]",
            '  snapshotter = "overlayfs"',
            '  default_runtime_name = "runc"',
            f"[{cri}.containerd.runtimes.runc]",
            '  runtime_type = "io.containerd.runc.v2"',
            f"[{cri}.containerd.runtimes.runc.options]",
            f'  Root = "{state / "runc"}"',
            f"[{cri}.cni]",
            f'  bin_dir = "{cni.BIN_DIR}"',
            f'  conf_dir = "{layout.cni_conf_dir}"',
            f"[{cri}.registry]",
            f'  config_path = "{layout.registry_hosts_dir}"',
            "",
        ]
    )


def mirror_hosts(mirror: str) -> str:
    """`hosts.toml` for `docker.io`: pull from the registry at `mirror` (`host:port`) first, so
    public names (`busybox:1.35`, that is `docker.io/library/busybox:1.35`) are served by the local
    registry under the same repository. The mirror is trusted like every registry (the process-wide
    CA bundle, `ca_bundle`); what it lacks fails over to Docker Hub, which no node can reach."""
    return "\n".join(
        [
            'server = "https://registry-1.docker.io"',
            f'[host."https://{mirror}"]',
            '  capabilities = ["pull", "resolve"]',
            "",
        ]
    )


def ca_bundle(cluster_ca_pem: bytes) -> bytes:
    """The system's CAs followed by the cluster's."""
    system = SYSTEM_CA_BUNDLE.read_bytes() if SYSTEM_CA_BUNDLE.is_file() else b""
    return system + cluster_ca_pem


def args(layout: NodeLayout) -> list[str]:
    return ["containerd", f"--config={layout.containerd_config}"]


def environment(layout: NodeLayout) -> dict[str, str]:
    """What containerd's environment adds to the node's."""
    return {"SSL_CERT_FILE": str(layout.ca_bundle)}


def ctr(layout: NodeLayout, *args: str) -> list[str]:
    """A `ctr` command line against this node's containerd, in the Kubernetes namespace."""
    return ["ctr", f"--address={layout.containerd_socket}", "--namespace=k8s.io", *args]


def answers(layout: NodeLayout) -> bool:
    return subprocess.run(ctr(layout, "version"), capture_output=True, check=False).returncode == 0


def import_archive(layout: NodeLayout, archive: Path) -> None:
    """Import an OCI archive's images into the node's containerd."""
    result = subprocess.run(
        ctr(layout, "images", "import", str(archive)), capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        raise process.ComponentFailure(f"containerd refused {archive.name}: {result.stderr.strip()}")
