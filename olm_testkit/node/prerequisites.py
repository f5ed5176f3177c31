"""What a machine needs to run a real node, beyond the node network's (`nodenet.check_prerequisites`):
root, Debian's containerd, runc, conntrack and CNI plugins, the overlay filesystem, cgroups v1, and
the node's binaries."""

from __future__ import annotations

import shutil
from pathlib import Path

from olm_testkit import nodenet
from olm_testkit.node import cni
from olm_testkit.node.cgroups import CGROUP_ROOT

BINARIES = ("kubelet", "kube-proxy", "coredns", "pause")
"""Expected in the binary directory (olm-py builds them: `make cluster-binaries`)."""

# The Debian packages a real node needs beyond the node network's, by the command they ship.
REQUIRED_TOOLS = {
    "containerd": "containerd",
    "ctr": "containerd",
    "runc": "runc",
    "conntrack": "conntrack",
}


def check_prerequisites(binary_dir: Path) -> None:
    """Raise PrerequisiteMissing naming the package, binary or kernel feature this machine lacks."""
    nodenet.check_prerequisites()
    for tool, package in REQUIRED_TOOLS.items():
        if shutil.which(tool) is None:
            raise nodenet.PrerequisiteMissing(
                f"{tool!r} is not installed: install Debian's `{package}` package"
            )
    for plugin in cni.PLUGINS:
        if not (cni.BIN_DIR / plugin).is_file():
            raise nodenet.PrerequisiteMissing(
                f"the CNI plugin {plugin!r} is missing from {cni.BIN_DIR}: "
                "install Debian's `containernetworking-plugins` package"
            )
    if "overlay" not in Path("/proc/filesystems").read_text():
        raise nodenet.PrerequisiteMissing(
            "the kernel has no overlay filesystem (containerd's snapshotter needs it): modprobe overlay"
        )
    if not (CGROUP_ROOT / "memory").is_dir():
        raise nodenet.PrerequisiteMissing(
            "no cgroup v1 memory hierarchy at /sys/fs/cgroup/memory: this node expects cgroups v1"
        )
    missing = [name for name in BINARIES if not (binary_dir / name).is_file()]
    if missing:
        raise nodenet.PrerequisiteMissing(
            f"missing in {binary_dir}: {', '.join(missing)} (build them with `make cluster-binaries`)"
        )
