"""Local control plane and registry: `python -m hack.controlplane build|up|down|status|selfcheck`.

`build [--set run|test]` builds the pinned binaries of a set if needed and prints their directory
(`test`, everything, by default; `run`, what `make run` starts). `up` builds the `run` set if needed,
then starts (or reuses) the control plane and the registry in the state directory
(`$OLMPY_STATE_DIR`, default `~/.cache/olm-py/state/dev`) and leaves them running; `down` stops them.
`selfcheck` creates a Deployment and times how long it takes to become Available on the kwok nodes.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from olm_runtime.testing import process
from olm_runtime.testing.controlplane import ControlPlane, ControlPlaneOptions
from olm_runtime.testing.registry import Registry, RegistryOptions
from olm_testkit import binaries, nodenet


def state_dir() -> Path:
    default = Path(os.path.expanduser("~/.cache/olm-py/state/dev"))
    return Path(os.environ.get("OLMPY_STATE_DIR") or default)


def make_control_plane(binary_dir: Path, *, address: str | None = None) -> ControlPlane:
    """The control plane of the state directory. It listens on the host end of the first node
    network when `make run` holds any (real nodes join), else on loopback; `address` overrides
    that."""
    if address is None:
        held = nodenet.held_by(state_dir())
        address = held[0].host_ip if held else "127.0.0.1"
    return ControlPlane(
        ControlPlaneOptions(binary_dir=binary_dir, state_dir=state_dir() / "controlplane", address=address)
    )


def make_registry(control_plane: ControlPlane) -> Registry:
    """The registry of the state directory, listening where the control plane does."""
    return Registry(
        RegistryOptions(
            state_dir=state_dir() / "registry",
            ca=control_plane.certificate_authority(),
            address=control_plane.options.address,
        )
    )


def _mib(value: int) -> str:
    return f"{value / 2**20:.0f} MiB"


def cmd_up() -> int:
    control_plane = make_control_plane(binaries.ensure_binaries("run"))
    seconds = control_plane.up()
    print(f"control plane ready (API server up, kwok nodes Ready) in {seconds:.1f}s")
    registry = make_registry(control_plane)
    print(f"registry ready in {registry.up():.1f}s")
    print(f"""
API server:  {control_plane.server}
kubeconfig:  export KUBECONFIG={control_plane.kubeconfig}
registry:    {registry.host} (CA: {registry.ca_file})
logs:        {control_plane.logs_dir}

Try:   kubectl --kubeconfig {control_plane.kubeconfig} get nodes
Stop:  make cluster-down""")
    return 0


def cmd_down() -> int:
    control_plane = make_control_plane(binaries.binary_dir("run"))
    make_registry(control_plane).down()
    control_plane.down()
    print("control plane and registry stopped")
    return 0


def cmd_status() -> int:
    control_plane = make_control_plane(binaries.binary_dir("run"))
    if not (control_plane.state_dir / "state.json").exists():
        print("control plane: down")
        return 1
    control_plane.up()  # reuses the running one, or restarts a stale one
    memory = control_plane.memory()
    for name, rss in memory.items():
        print(f"{name:<26} {_mib(rss):>9}")
    print(f"{'total':<26} {_mib(sum(memory.values())):>9}")
    return 0


def cmd_selfcheck() -> int:
    control_plane = make_control_plane(binaries.binary_dir("run"))
    control_plane.up()
    rest = control_plane.rest
    name = f"selfcheck-{int(time.time())}"
    labels = {"app": name}
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "c", "image": "busybox"}]},
            },
        },
    }
    started = time.monotonic()
    rest.request("POST", "/apis/apps/v1/namespaces/default/deployments", deployment)
    path = f"/apis/apps/v1/namespaces/default/deployments/{name}"

    def available() -> bool:
        conditions = rest.request("GET", path).get("status", {}).get("conditions", [])
        return any(c["type"] == "Available" and c["status"] == "True" for c in conditions)

    process.wait_until(
        available, timeout=60, what=f"Deployment {name} to become Available", alive=control_plane.check
    )
    print(f"Deployment {name} Available in {time.monotonic() - started:.1f}s")
    rest.request("DELETE", path)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hack.controlplane", description=__doc__)
    parser.add_argument("command", choices=("build", "up", "down", "status", "selfcheck"))
    parser.add_argument(
        "--set",
        choices=tuple(binaries.SETS),
        default="test",
        help="build: which binaries (run: what `make run` starts; test: everything, the default)",
    )
    args = parser.parse_args(argv)
    try:
        if args.command == "build":
            print(binaries.ensure_binaries(args.set))
            return 0
        return {"up": cmd_up, "down": cmd_down, "status": cmd_status, "selfcheck": cmd_selfcheck}[
            args.command
        ]()
    except (binaries.BuildError, process.ComponentFailure) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
