"""The `operator-controller` process: the ClusterExtension and ClusterObjectSet controllers.

    operator-controller --kubeconfig ~/.kube/config --cache-dir /var/cache/operator-controller \\
        --catalogd-cas-dir /var/certs/catalogd --leader-elect

Both controllers run on the elected replica (every replica serves `/metrics`, `/healthz` and
`/readyz`). Bundle content is always applied as each ClusterExtension's ServiceAccount (or, for
one that names none, as the `--default-service-account` an administrator chose); the
process's own identity only reads catalogs and extensions, writes revisions and their Secrets, and
asks the API server what the ServiceAccounts may do (see `manifests/operator-controller`), and,
with `--shared-drift-watches`, watches the managed objects of every extension.
The metrics server takes `--tls-profile` and `--tls-custom-*`; `--feature-gates` takes upstream's
operator-controller gates (`olm.process.featuregates.OPERATOR_CONTROLLER`; WebhookProviderCertManager
is a real switch: false refuses bundles with webhooks).
SIGTERM and SIGINT stop everything gracefully. An API server that cannot be reached or used at start
ends the process with one log line naming the address and the cause, and exit code 1 (`olm.process.startup`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from olm import oci
from olm.api.kinds import CLUSTER_EXTENSION, CLUSTER_OBJECT_SET
from olm.operator_controller import clusterextension, clusterobjectset, metrics
from olm.pipeline import resolve
from olm.pipeline.catalogs import CatalogClient
from olm.pipeline.catalogs import ClientOptions as CatalogClientOptions
from olm.process import featuregates, pullconfig, testing_seams
from olm.process import flags as processflags
from olm.process import main as process
from olm_runtime import logging
from olm_runtime.manager import Manager

FIELD_MANAGER = "operator-controller"
LEASE_NAME = "9c4404e7.operatorframework.io"
_log = logging.get_logger("operator_controller.main")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="operator-controller", description="Installs, upgrades and removes OLM v1 ClusterExtensions."
    )
    processflags.add_common_flags(
        p,
        lease_name=LEASE_NAME,
        leader_help="elect one replica to run the controllers",
        metrics_port=8443,
        gates=featuregates.OPERATOR_CONTROLLER,
    )
    p.add_argument("--tls-cert", type=Path, help="PEM certificate of the metrics server (unset: self-signed)")
    p.add_argument("--tls-key", type=Path, help="PEM private key of the metrics server (unset: self-signed)")
    p.add_argument(
        "--cache-dir",
        type=Path,
        default=Path("/var/cache/operator-controller"),
        help="bundle image blobs and unpacked bundles",
    )
    p.add_argument(
        "--catalogd-cas-dir",
        type=Path,
        help="directory of PEM CA bundles trusted for catalogd's HTTPS server (re-read when they change)",
    )
    p.add_argument(
        "--shared-drift-watches",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="watch managed objects as operator-controller, one watch per kind for all extensions, on "
        "kinds it may list and watch cluster-wide (manifests/shared-drift-watches grants that); "
        "default: each extension's objects are watched as its ServiceAccount",
    )
    p.add_argument(
        "--clusterobjectset-identity-policy",
        default=clusterobjectset.IDENTITY_POLICY,
        metavar="NAME",
        help="the ValidatingAdmissionPolicy (and binding) of that name must be in force before a "
        "revision is applied as the ServiceAccount it names; empty: not checked, only where other "
        "admission control enforces the same rule (default: %(default)s)",
    )
    p.add_argument(
        "--clusterextension-identity-policy",
        default=clusterextension.Options.identity_policy,
        metavar="NAME",
        help="the ValidatingAdmissionPolicy (and binding) of that name must be in force before an "
        "extension is installed as the spec.serviceAccount it names; empty: not checked (default: "
        "%(default)s)",
    )
    p.add_argument(
        "--default-service-account",
        type=_installer,
        metavar="NAMESPACE/NAME",
        help="install ClusterExtensions that name no spec.serviceAccount as this ServiceAccount "
        "(manifests/default-installer creates one bound to cluster-admin); default: hold them with a "
        "condition that says how to grant an installer",
    )
    return p


def _installer(text: str) -> clusterextension.Installer:
    try:
        return clusterextension.Installer.parse(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


async def run(args: argparse.Namespace, seams: testing_seams.Seams) -> None:
    cache_dir: Path = args.cache_dir
    async with process.connect(args, field_manager=FIELD_MANAGER) as client:
        options = processflags.manager_options(
            args, scoped=(CLUSTER_EXTENSION, CLUSTER_OBJECT_SET), scope_selector=seams.scope_selector
        )
        manager = Manager(client, options=options)
        registry_options = processflags.registry_options(
            args, cache_dir=cache_dir, user_agent="operator-controller"
        )
        # Cached packages keep only what resolution reads: descriptions and icons are most of a
        # catalog. catalogd is reached through the same environment proxies as the registries.
        catalog_client = CatalogClient(
            CatalogClientOptions(
                ca_dir=args.catalogd_cas_dir,
                bundle_properties=resolve.BUNDLE_PROPERTIES,
                proxies=registry_options.proxies,
            )
        )
        metrics.register_catalog_client(catalog_client.statistics)
        try:
            async with oci.RegistryClient(registry_options) as registry:
                await pullconfig.follow_global_pull_secret(
                    manager, args.global_pull_secret, registry, "operator-controller"
                )
                await clusterobjectset.setup_with_manager(
                    manager,
                    clusterobjectset.Options(
                        system_namespace=args.system_namespace,
                        shared_drift_watches=args.shared_drift_watches,
                        identity_policy=args.clusterobjectset_identity_policy,
                        deadline_minute_seconds=seams.deadline_minute_seconds,
                    ),
                )
                await clusterextension.setup_with_manager(
                    manager,
                    catalog_client,
                    registry,
                    clusterextension.Options(
                        system_namespace=args.system_namespace,
                        cache_dir=cache_dir,
                        default_installer=args.default_service_account,
                        identity_policy=args.clusterextension_identity_policy,
                        crash_after_secrets=seams.crash_after_secrets,
                        poll_minute_seconds=seams.poll_minute_seconds,
                        bundle_webhooks=args.features["WebhookProviderCertManager"],
                    ),
                )
                _log.info(
                    "operator_controller.starting", cache=str(cache_dir), leader_election=args.leader_elect
                )
                await manager.run(handle_signals=True)
        finally:
            await catalog_client.close()


def main(argv: Sequence[str] | None = None) -> int:
    return process.main(parser(), run, argv)


if __name__ == "__main__":
    sys.exit(main())
