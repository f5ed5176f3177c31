"""A local control plane for your own use: `python -m olm_runtime.testing binaries|up|down|status`.

`binaries` builds the pinned control-plane binaries from the Go module proxy into a cache (or finds
them there, already built) and prints their directory; with `--no-build` it only looks. `up` starts
etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok (three simulated nodes) on
loopback, or reuses the ones already running in the state directory, leaves them running and prints
the admin kubeconfig's path; `down` stops them; `status` says whether the API server is ready. The
same control plane as the `control_plane` pytest fixture, without a test session.

`up` runs the binaries `binaries` gives, building them first if needed (Go >= 1.26 on PATH);
`--binaries` (or `$OLMPY_ASSETS`) names another directory holding `etcd`, `kube-apiserver`,
`kube-controller-manager`, `kube-scheduler`, `kwok` and `kwok-stages.yaml` instead.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from olm_runtime.testing import binaries, process
from olm_runtime.testing._rest import RESTClient
from olm_runtime.testing.controlplane import ControlPlane, ControlPlaneOptions

DEFAULT_STATE_DIR = Path("~/.cache/olm-runtime/controlplane")


def _control_plane(args: argparse.Namespace) -> ControlPlane:
    # down and status never start a component, so they need no binaries.
    directory = Path(args.binaries) if args.binaries else Path()
    return ControlPlane(ControlPlaneOptions(binary_dir=directory, state_dir=args.state_dir, nodes=args.nodes))


def cmd_binaries(args: argparse.Namespace) -> int:
    print(binaries.ensure(build=not args.no_build))
    return 0


def cmd_up(args: argparse.Namespace) -> int:
    if not args.binaries:
        args.binaries = str(binaries.ensure())
    control_plane = _control_plane(args)
    seconds = control_plane.up()
    print(f"control plane ready (API server up, kwok nodes Ready) in {seconds:.1f}s")
    print(f"API server:  {control_plane.server}")
    print(f"logs:        {control_plane.logs_dir}")
    print(f"stop:        python -m olm_runtime.testing down --state-dir {args.state_dir}")
    print(f"kubeconfig:  {control_plane.kubeconfig}")
    return 0


def cmd_down(args: argparse.Namespace) -> int:
    _control_plane(args).down()
    print("control plane stopped")
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    control_plane = _control_plane(args)
    if not (control_plane.state_dir / "state.json").is_file():
        print("control plane: down")
        return 1
    kubeconfig = json.loads(control_plane.kubeconfig.read_text())
    server = kubeconfig["clusters"][0]["cluster"]["server"]
    rest = RESTClient(
        server=server,
        ca_file=control_plane.ca_file,
        cert_file=control_plane.admin.cert_file,
        key_file=control_plane.admin.key_file,
        timeout=5,
    )
    try:
        ready = rest.raw("GET", "/readyz")[0] == 200
    except OSError:
        ready = False
    print(f"control plane: {'ready' if ready else 'not ready (run up to restart it)'}")
    print(f"API server:  {server}")
    print(f"kubeconfig:  {control_plane.kubeconfig}")
    return 0 if ready else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m olm_runtime.testing", description=__doc__)
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("command", choices=("binaries", "up", "down", "status"))
    parser.add_argument(
        "--binaries",
        default=os.environ.get("OLMPY_ASSETS"),
        help="up: directory of the control-plane binaries (default: $OLMPY_ASSETS, else the ones "
        "`binaries` builds or finds)",
    )
    parser.add_argument(
        "--no-build",
        action="store_true",
        help=f"binaries: only find them in the cache ({binaries.cache_root()}), never build; "
        "exit 1 when they are not there",
    )
    parser.add_argument(
        "--state-dir",
        type=lambda value: Path(value).expanduser().absolute(),
        default=DEFAULT_STATE_DIR.expanduser(),
        help=f"certificates, etcd data, logs and the kubeconfig (default: {DEFAULT_STATE_DIR})",
    )
    parser.add_argument("--nodes", type=int, default=3, help="kwok nodes to create (default: 3)")
    args = parser.parse_args(argv)
    commands = {"binaries": cmd_binaries, "up": cmd_up, "down": cmd_down, "status": cmd_status}
    try:
        return commands[args.command](args)
    except (binaries.BuildError, process.ComponentFailure) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
