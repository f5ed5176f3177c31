"""Removing everything a node made, after `down()` or after a crash: its processes, containers,
mounts, the Pods' network namespaces, cgroups, the `/var/log/containers` links and (unless kept for
its owner) the node network."""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import signal
import subprocess
from pathlib import Path

from olm_testkit import nodenet
from olm_testkit.node import cgroups
from olm_testkit.node.layout import node_cgroup

NODE_PROGRAMS = frozenset({"containerd", "containerd-shim-runc-v2", "kubelet", "kube-proxy", "coredns"})
"""The only programs `cleanup` kills by command line (never, say, a `tail -f` of a node's log)."""
CONTAINER_LOGS = Path("/var/log/containers")


def cleanup(state_dir: Path, network: nodenet.NodeNetwork, *, keep_network: bool = False) -> None:
    """Remove what a node with this state directory and network left: containers, shims,
    containerd, mounts, the Pods' network namespaces, cgroups and (unless `keep_network`, for the
    network's owner to delete once nothing listens on it) the node network."""
    cgroup_parent = node_cgroup(network.index)
    # The node's own processes first (their command lines name files of the state directory:
    # kubelet, kube-proxy, CoreDNS, containerd and its shims), so none restarts a container.
    for pid in _node_processes(str(state_dir) + "/"):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    cgroups.kill_tree(cgroup_parent)
    _unmount_below(state_dir)
    _delete_pod_netns(network)
    network.forget_attachments()
    cgroups.remove_tree(cgroup_parent)
    for link in CONTAINER_LOGS.glob("*.log") if CONTAINER_LOGS.is_dir() else ():
        with contextlib.suppress(OSError):
            if str(state_dir) in os.readlink(link):
                link.unlink()
    if not keep_network:
        network.delete()


def _node_processes(text: str) -> list[int]:
    """The node's own programs whose command line mentions `text`."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            if os.path.basename(os.readlink(proc / "exe")) not in NODE_PROGRAMS:
                continue
            if text in (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"):
                found.append(int(proc.name))
    return found


def _unmount_below(directory: Path) -> None:
    prefix = str(directory.resolve()) + "/"
    mounts = []
    with contextlib.suppress(FileNotFoundError):
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            target = line.split()[4].encode().decode("unicode_escape")
            if target.startswith(prefix):
                mounts.append(target)
    for target in sorted(mounts, key=len, reverse=True):
        subprocess.run(["umount", "-l", target], capture_output=True, check=False)


def _delete_pod_netns(network: nodenet.NodeNetwork) -> None:
    pods = ipaddress.ip_network(network.pod_cidr)
    for netns in nodenet.NETNS_DIR.glob("cni-*"):
        result = subprocess.run(
            ["ip", "-n", netns.name, "-j", "addr"], capture_output=True, text=True, check=False
        )
        with contextlib.suppress(ValueError):
            for link in json.loads(result.stdout or "[]"):
                for addr in link.get("addr_info", ()):
                    if addr.get("family") == "inet" and ipaddress.ip_address(addr["local"]) in pods:
                        subprocess.run(
                            ["ip", "netns", "delete", netns.name], capture_output=True, check=False
                        )
