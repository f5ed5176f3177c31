"""The node's cgroup, `/olm-node-<k>` in every hierarchy: the kubelet keeps every Pod below it
(cgroups v1, the cgroupfs driver), so a container's processes are found, measured and killed
through it, and removing the tree leaves nothing of the node's Pods behind."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")


def all_hierarchies() -> list[Path]:
    """Every mounted hierarchy, v2's `unified` too: runc creates the node's cgroup there as well."""
    return sorted(path for path in CGROUP_ROOT.iterdir() if (path / "cgroup.procs").exists())


def v1_hierarchies() -> list[Path]:
    return sorted(
        path
        for path in CGROUP_ROOT.iterdir()
        if path.is_dir() and path.name != "unified" and (path / "cgroup.procs").exists()
    )


def make(cgroup_parent: str) -> None:
    """Create the node's cgroup in every v1 hierarchy. The kubelet refuses a cgroup root missing
    from any hierarchy; a new cpuset cgroup starts with no CPUs or memory nodes, so it gets its
    parent's."""
    for hierarchy in v1_hierarchies():
        path = hierarchy / cgroup_parent
        path.mkdir(exist_ok=True)
        if hierarchy.name == "cpuset":
            for key in ("cpuset.cpus", "cpuset.mems"):
                (path / key).write_text((hierarchy / key).read_text())


def container_pids(cgroup_parent: str, container_id: str) -> list[int]:
    """The processes of one container (its cgroup's in the memory hierarchy)."""
    for path in (CGROUP_ROOT / "memory" / cgroup_parent).rglob("cgroup.procs"):
        if container_id in path.parent.name:
            return [int(pid) for pid in path.read_text().split()]
    return []


def kill_tree(cgroup_parent: str) -> None:
    """SIGKILL every process below the node's cgroup, in every hierarchy, until none is left."""
    for _ in range(3):
        pids = {
            int(pid)
            for hierarchy in all_hierarchies()
            for procs in (hierarchy / cgroup_parent).rglob("cgroup.procs")
            for pid in procs.read_text().split()
        }
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.2)


def remove_tree(cgroup_parent: str) -> None:
    """Remove the node's cgroup and every cgroup below it, deepest first."""
    for hierarchy in all_hierarchies():
        root = hierarchy / cgroup_parent
        if not root.is_dir():
            continue
        for directory in sorted(
            (p for p in root.rglob("*") if p.is_dir()), key=lambda p: len(p.parts), reverse=True
        ):
            with contextlib.suppress(OSError):
                directory.rmdir()
        with contextlib.suppress(OSError):
            root.rmdir()
