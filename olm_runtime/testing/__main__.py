"""A local control plane for your own use: `python -m olm_runtime.testing up|down|status`.

`up` starts etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok (three simulated
nodes) on loopback, or reuses the ones already running in the state directory, leaves them running
and prints the admin kubeconfig's path; `down` stops them; `status` says whether the API server is
ready. The same control plane as the `control_plane` pytest fixture, without a test session.

The runtime ships no binaries and no Go builder: `--binaries` (or `$OLMPY_ASSETS`) names a directory
holding `etcd`, `kube-apiserver`, `kube-controller-manager`, `kube-scheduler`, `kwok` and
`kwok-stages.yaml`, such as the one olm-py's `python -m hack.controlplane build` prints.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from olm_runtime.testing import process
from olm_runtime.testing._rest import RESTClient
from olm_runtime.testing.controlplane import ControlPlane, ControlPlaneOptions

DEFAULT_STATE_DIR = Path("~/.cache/olm-runtime/controlplane")


def _control_plane(args: argparse.Namespace) -> ControlPlane:
    # down and status never start a component, so they need no binaries.
    binaries = Path(args.binaries) if args.binaries else Path()
    return ControlPlane(ControlPlaneOptions(binary_dir=binaries, state_dir=args.state_dir, nodes=args.nodes))


def cmd_up(args: argparse.Namespace) -> int:
    if not args.binaries:
        print(
            "error: name the directory of the control-plane binaries with --binaries or $OLMPY_ASSETS "
            "(olm-py's `python -m hack.controlplane build` builds them and prints it)",
            file=sys.stderr,
        )
        return 2
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
    parser.add_argument("command", choices=("up", "down", "status"))
    parser.add_argument(
        "--binaries",
        default=os.environ.get("OLMPY_ASSETS"),
        help="directory of the control-plane binaries (default: $OLMPY_ASSETS)",
    )
    parser.add_argument(
        "--state-dir",
        type=lambda value: Path(value).expanduser().absolute(),
        default=DEFAULT_STATE_DIR.expanduser(),
        help=f"certificates, etcd data, logs and the kubeconfig (default: {DEFAULT_STATE_DIR})",
    )
    parser.add_argument("--nodes", type=int, default=3, help="kwok nodes to create (default: 3)")
    args = parser.parse_args(argv)
    commands = {"up": cmd_up, "down": cmd_down, "status": cmd_status}
    try:
        return commands[args.command](args)
    except process.ComponentFailure as err:
        print(f"error: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
