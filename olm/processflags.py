"""The command-line flags catalogd and operator-controller share, and what they configure.

Both processes take the same connection, leader-election, serving, registry-trust and logging
flags; each adds its own. `add_common_flags` declares them; `manager_options` turns them into the
runtime's `ManagerOptions` and `registry_options` into the registry client's `oci.ClientOptions`;
`--api-server-timeout` bounds `olm.startup.wait_for_api_server` (called by `olm.process.connect`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from olm import oci, pullconfig, startup
from olm.api import names
from olm_runtime import logging
from olm_runtime.client import Client
from olm_runtime.manager import LeaderElectionOptions, ManagerOptions, WebhookOptions

__all__ = ["add_common_flags", "manager_options", "registry_options", "seconds"]


def seconds(text: str) -> float:
    """An argparse type: a non-negative number of seconds."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value >= 0:  # also rejects nan
        raise argparse.ArgumentTypeError(f"must be zero or more seconds: {text!r}")
    return value


def add_common_flags(parser: argparse.ArgumentParser, *, lease_name: str, leader_help: str) -> None:
    parser.add_argument(
        "--kubeconfig", help="kubeconfig file (default: $KUBECONFIG, ~/.kube/config, in-cluster)"
    )
    parser.add_argument(
        "--api-server-timeout",
        type=seconds,
        default=startup.DEFAULT_TIMEOUT,
        help="seconds to keep retrying an unreachable API server at start before exiting with 1",
    )
    parser.add_argument(
        "--leader-elect", action=argparse.BooleanOptionalAction, default=False, help=leader_help
    )
    parser.add_argument(
        "--leader-election-namespace", help="namespace of the Lease (default: --system-namespace)"
    )
    parser.add_argument("--leader-election-id", default=lease_name, help="name of the Lease")
    parser.add_argument("--metrics-bind-address", default=":8080", help="/metrics address, '0' to disable")
    parser.add_argument("--health-probe-bind-address", default=":8081", help="/healthz and /readyz address")
    parser.add_argument("--system-namespace", default=names.DEFAULT_SYSTEM_NAMESPACE, help="where OLM runs")
    parser.add_argument(
        "--global-pull-secret", help="<namespace>/<name> of a dockerconfigjson Secret used for every pull"
    )
    parser.add_argument(
        "--pull-cas-dir", type=Path, help="directory of extra PEM CA bundles trusted for registries"
    )
    parser.add_argument(
        "--log-format",
        choices=logging.FORMATS,
        default="json",
        help="json: one object per line; text: key=value lines for people (console: the same as text)",
    )
    parser.add_argument("--log-level", choices=("debug", "info", "warning", "error"), default="info")


def manager_options(args: argparse.Namespace, *, webhook: WebhookOptions | None = None) -> ManagerOptions:
    """The manager of a process started with the common flags."""
    election = None
    if args.leader_elect:
        election = LeaderElectionOptions(
            lease_name=args.leader_election_id,
            namespace=args.leader_election_namespace or args.system_namespace,
        )
    return ManagerOptions(
        leader_election=election,
        metrics_bind_address=args.metrics_bind_address,
        health_probe_bind_address=args.health_probe_bind_address,
        webhook=webhook or WebhookOptions(),
    )


async def registry_options(
    args: argparse.Namespace, client: Client, *, cache_dir: Path, user_agent: str
) -> oci.ClientOptions:
    """The registry client of a process started with the common flags: blobs under `cache_dir/blobs`,
    the `--pull-cas-dir` CAs, the `--global-pull-secret` credentials (read once, now)."""
    return oci.ClientOptions(
        cache_dir=cache_dir / "blobs",
        ca_files=pullconfig.ca_files(args.pull_cas_dir),
        keychain=await pullconfig.keychain_from_secret(client, args.global_pull_secret),
        user_agent=user_agent,
    )
