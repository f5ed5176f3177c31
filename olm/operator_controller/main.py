"""The `operator-controller` process: the ClusterExtension and ClusterObjectSet controllers.

    operator-controller --kubeconfig ~/.kube/config --cache-dir /var/cache/operator-controller \\
        --catalogd-cas-dir /var/certs/catalogd --leader-elect

Both controllers run on the elected replica (every replica serves `/metrics`, `/healthz` and
`/readyz`). Bundle content is always applied as each ClusterExtension's ServiceAccount; the
process's own identity only reads catalogs and extensions, writes revisions and their Secrets, and
asks the API server what the ServiceAccounts may do (see `manifests/operator-controller`).
SIGTERM and SIGINT stop everything gracefully.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from olm import oci, pullconfig
from olm.api import names
from olm.operator_controller import clusterextension, clusterobjectset
from olm.operator_controller.catalogclient import CatalogClient
from olm.operator_controller.catalogclient import ClientOptions as CatalogClientOptions
from olm_runtime import logging
from olm_runtime.client import Client, load_config
from olm_runtime.manager import LeaderElectionOptions, Manager, ManagerOptions

FIELD_MANAGER = "operator-controller"
LEASE_NAME = "9c4404e7.operatorframework.io"
_log = logging.get_logger("operator_controller.main")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="operator-controller", description="Installs, upgrades and removes OLM v1 ClusterExtensions."
    )
    p.add_argument("--kubeconfig", help="kubeconfig file (default: $KUBECONFIG, ~/.kube/config, in-cluster)")
    p.add_argument(
        "--leader-elect",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="elect one replica to run the controllers",
    )
    p.add_argument("--leader-election-namespace", help="namespace of the Lease (default: --system-namespace)")
    p.add_argument("--leader-election-id", default=LEASE_NAME, help="name of the Lease")
    p.add_argument("--metrics-bind-address", default=":8080", help="/metrics address, '0' to disable")
    p.add_argument("--health-probe-bind-address", default=":8081", help="/healthz and /readyz address")
    p.add_argument("--system-namespace", default=names.DEFAULT_SYSTEM_NAMESPACE, help="where OLM runs")
    p.add_argument(
        "--cache-dir",
        type=Path,
        default=Path("/var/cache/operator-controller"),
        help="bundle image blobs and unpacked bundles",
    )
    p.add_argument(
        "--catalogd-cas-dir",
        type=Path,
        help="directory of PEM CA bundles trusted for catalogd's HTTPS server",
    )
    p.add_argument(
        "--pull-cas-dir", type=Path, help="directory of extra PEM CA bundles trusted for registries"
    )
    p.add_argument(
        "--global-pull-secret", help="<namespace>/<name> of a dockerconfigjson Secret used for every pull"
    )
    p.add_argument("--log-format", choices=("json", "console"), default="json")
    p.add_argument("--log-level", choices=("debug", "info", "warning", "error"), default="info")
    return p


async def run(args: argparse.Namespace) -> None:
    config = await load_config(kubeconfig=args.kubeconfig)
    cache_dir: Path = args.cache_dir
    async with await Client.connect(config, field_manager=FIELD_MANAGER) as client:
        election = None
        if args.leader_elect:
            election = LeaderElectionOptions(
                lease_name=args.leader_election_id,
                namespace=args.leader_election_namespace or args.system_namespace,
            )
        manager = Manager(
            client,
            options=ManagerOptions(
                leader_election=election,
                metrics_bind_address=args.metrics_bind_address,
                health_probe_bind_address=args.health_probe_bind_address,
            ),
        )
        registry_options = oci.ClientOptions(
            cache_dir=cache_dir / "blobs",
            ca_files=pullconfig.ca_files(args.pull_cas_dir),
            keychain=await pullconfig.keychain_from_secret(client, args.global_pull_secret),
            user_agent="operator-controller",
        )
        catalog_client = CatalogClient(
            CatalogClientOptions(ca_files=pullconfig.ca_files(args.catalogd_cas_dir))
        )
        try:
            async with oci.RegistryClient(registry_options) as registry:
                await clusterobjectset.setup(
                    manager, clusterobjectset.Options.from_env(system_namespace=args.system_namespace)
                )
                await clusterextension.setup(
                    manager,
                    catalog_client,
                    registry,
                    clusterextension.Options(
                        system_namespace=args.system_namespace,
                        cache_dir=cache_dir,
                        crash_after_secrets=os.environ.get(clusterextension.CRASH_AFTER_SECRETS_ENV) == "1",
                    ),
                )
                _log.info(
                    "operator_controller.starting", cache=str(cache_dir), leader_election=election is not None
                )
                await manager.run(handle_signals=True)
        finally:
            await catalog_client.close()


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    logging.configure(format=args.log_format, level=args.log_level)
    try:
        asyncio.run(run(args))
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
