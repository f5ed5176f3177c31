"""The `catalogd` process: the ClusterCatalog controller, the catalog content server, the webhook.

    catalogd --kubeconfig ~/.kube/config --storage-dir /var/cache/catalogd \\
        --tls-cert /certs/tls.crt --tls-key /certs/tls.key \\
        --external-address catalogd-service.olmv1-system.svc --leader-elect

What runs, on which replica (see `docs/catalogd/controller.md`):

- every replica: the HTTPS catalog server, the webhook server (when `--webhook-cert-dir` is set), the
  follower that unpacks what the leader resolved, garbage collection, `/metrics`, probes;
- the elected replica: the ClusterCatalog reconciler (resolve, unpack, status).

Every TLS server (catalog content, webhook, metrics) takes `--tls-profile` and `--tls-custom-*`;
`--feature-gates` takes upstream's catalogd gates (`olm.process.featuregates.CATALOGD`).

The storage directory survives restarts: served catalogs are served again at once and blobs in the
cache are never downloaded twice. SIGTERM and SIGINT stop everything gracefully. An API server that
cannot be reached or used at start ends the process with one log line naming the address and the
cause, and exit code 1 (`olm.process.startup`).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Sequence
from pathlib import Path

from olm import oci
from olm.api.kinds import CLUSTER_CATALOG
from olm.catalogd import controller, follower, gc, metrics, webhook
from olm.catalogd.content import Content
from olm.catalogd.server import CatalogServer, ServerOptions
from olm.catalogd.storage import Storage
from olm.catalogd.unpack import Unpacker
from olm.process import featuregates, flags, pullconfig, testing_seams
from olm.process import main as process
from olm_runtime import logging
from olm_runtime.manager import Manager, WebhookOptions, runnable_from

FIELD_MANAGER = "catalogd"
LEASE_NAME = "catalogd-operator-lock"
_log = logging.get_logger("catalogd.main")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="catalogd", description="Unpacks and serves OLM v1 File-Based Catalogs.")
    flags.add_common_flags(
        p,
        lease_name=LEASE_NAME,
        leader_help="elect one replica to reconcile (every replica serves content either way)",
        metrics_port=7443,
        gates=featuregates.CATALOGD,
    )
    p.add_argument("--catalogs-server-addr", default=":8443", help="HTTPS catalog content server address")
    p.add_argument("--webhook-bind-address", default=":9443", help="admission webhook server address")
    p.add_argument(
        "--webhook-cert-dir",
        type=Path,
        help="directory with tls.crt/tls.key of the webhook (unset: no webhook)",
    )
    p.add_argument(
        "--tls-cert", type=Path, required=True, help="PEM certificate of the catalog and metrics servers"
    )
    p.add_argument(
        "--tls-key", type=Path, required=True, help="PEM private key of the catalog and metrics servers"
    )
    p.add_argument("--storage-dir", type=Path, default=Path("/var/cache/catalogd"), help="persistent state")
    p.add_argument(
        "--external-address",
        default="catalogd-service.olmv1-system.svc",
        help="host[:port] (or https:// URL) clients reach the catalog server at; used for status.urls.base",
    )
    p.add_argument("--gc-interval", type=float, default=gc.DEFAULT_INTERVAL, help="seconds between GC rounds")
    return p


def _split_address(address: str, default_host: str = "0.0.0.0") -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    return (host.strip("[]") or default_host), int(port)


def _base_url(external_address: str) -> str:
    address = external_address.rstrip("/")
    if "://" not in address:
        address = f"https://{address}"
    return f"{address}/catalogs"


async def run(args: argparse.Namespace, seams: testing_seams.Seams) -> None:
    storage_dir: Path = args.storage_dir
    async with process.connect(args, field_manager=FIELD_MANAGER) as client:
        webhook_options = WebhookOptions()
        if args.webhook_cert_dir is not None:
            host, port = _split_address(args.webhook_bind_address, "")
            webhook_options = WebhookOptions(host=host, port=port, cert_dir=args.webhook_cert_dir)
        options = flags.manager_options(
            args, webhook=webhook_options, scoped=(CLUSTER_CATALOG,), scope_selector=seams.scope_selector
        )
        manager = Manager(client, options=options)
        registry_options = flags.registry_options(args, cache_dir=storage_dir, user_agent="catalogd")
        # The storage is closed after the manager stopped: the gzip forms still being written stop.
        async with (
            oci.RegistryClient(registry_options) as registry,
            contextlib.aclosing(Storage(storage_dir / "catalogs")) as storage,
        ):
            await pullconfig.follow_global_pull_secret(manager, args.global_pull_secret, registry, "catalogd")
            metrics.register_registry_client(registry.statistics)
            storage.recover()
            unpacker = Unpacker(registry, storage_dir / "unpack")
            content = Content(registry, unpacker, storage)
            host, port = _split_address(args.catalogs_server_addr)
            server = CatalogServer(
                storage,
                ServerOptions(
                    cert_file=args.tls_cert, key_file=args.tls_key, host=host, port=port, tls_profile=args.tls
                ),
                catch_up=follower.catch_up(manager.reader, content),
            )
            manager.add(runnable_from(server.start, needs_leader_election=False, name="catalog-server"))

            async def serving() -> None:
                if not server.ready.is_set():
                    raise RuntimeError("the catalog server is not listening")

            manager.add_ready_check("catalog-server", serving)
            await controller.setup_with_manager(
                manager,
                content,
                controller.ControllerOptions(
                    base_url=_base_url(args.external_address),
                    seconds_per_minute=seams.poll_minute_seconds,
                ),
            )
            if args.leader_elect:
                await follower.setup_with_manager(manager, content)
            manager.add(gc.GarbageCollector(manager.reader, content, interval=args.gc_interval))
            if args.webhook_cert_dir is not None:
                webhook.register(manager.webhook_server)
            _log.info("catalogd.starting", storage=str(storage_dir), leader_election=args.leader_elect)
            await manager.run(handle_signals=True)


def main(argv: Sequence[str] | None = None) -> int:
    return process.main(parser(), run, argv)


if __name__ == "__main__":
    sys.exit(main())
