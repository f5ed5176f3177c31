"""The `operator-controller` process: the ClusterExtension and ClusterObjectSet controllers.

    operator-controller --kubeconfig ~/.kube/config --cache-dir /var/cache/operator-controller \\
        --catalogd-cas-dir /var/certs/catalogd --leader-elect

Both controllers run on the elected replica (every replica serves `/metrics`, `/healthz` and
`/readyz`). Bundle content is always applied as each ClusterExtension's ServiceAccount; the
process's own identity only reads catalogs and extensions, writes revisions and their Secrets, and
asks the API server what the ServiceAccounts may do (see `manifests/operator-controller`).
SIGTERM and SIGINT stop everything gracefully. An API server that cannot be reached or used at start
ends the process with one log line naming the address and the cause, and exit code 1 (`olm.startup`).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path

from olm import oci, processflags, pullconfig, startup, testing_seams
from olm.operator_controller import clusterextension, clusterobjectset
from olm.operator_controller.catalogclient import CatalogClient
from olm.operator_controller.catalogclient import ClientOptions as CatalogClientOptions
from olm_runtime import logging
from olm_runtime.client import Client
from olm_runtime.manager import Manager

FIELD_MANAGER = "operator-controller"
LEASE_NAME = "9c4404e7.operatorframework.io"
_log = logging.get_logger("operator_controller.main")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="operator-controller", description="Installs, upgrades and removes OLM v1 ClusterExtensions."
    )
    processflags.add_common_flags(
        p, lease_name=LEASE_NAME, leader_help="elect one replica to run the controllers"
    )
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
    return p


async def run(args: argparse.Namespace, seams: testing_seams.Seams) -> None:
    config = await startup.load_config(args.kubeconfig)
    cache_dir: Path = args.cache_dir
    async with await Client.connect(config, field_manager=FIELD_MANAGER) as client:
        await startup.wait_for_api_server(client.transport, config, timeout=args.api_server_timeout)
        manager = Manager(client, options=processflags.manager_options(args))
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
                    manager,
                    clusterobjectset.Options(
                        system_namespace=args.system_namespace,
                        deadline_minute_seconds=seams.deadline_minute_seconds,
                    ),
                )
                await clusterextension.setup(
                    manager,
                    catalog_client,
                    registry,
                    clusterextension.Options(
                        system_namespace=args.system_namespace,
                        cache_dir=cache_dir,
                        crash_after_secrets=seams.crash_after_secrets,
                    ),
                )
                _log.info(
                    "operator_controller.starting", cache=str(cache_dir), leader_election=args.leader_elect
                )
                await manager.run(handle_signals=True)
        finally:
            await catalog_client.close()


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    logging.configure(format=args.log_format, level=args.log_level)
    try:
        seams = testing_seams.Seams.from_environ()
    except testing_seams.SeamError as e:
        _log.error("testing_seams.invalid", error=str(e))
        return startup.EXIT_CODE
    if seams.enabled():
        _log.warning("testing_seams.enabled", **seams.enabled())
    try:
        asyncio.run(run(args, seams))
    except KeyboardInterrupt:
        return 130
    except startup.StartupError as e:
        _log.error(e.event, **e.fields)
        return startup.EXIT_CODE
    return 0


if __name__ == "__main__":
    sys.exit(main())
