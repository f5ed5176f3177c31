"""The command-line flags catalogd and operator-controller share, and what they configure.

Both processes take the same connection, leader-election, serving, TLS (`tlsflags`), feature-gate
(`featuregates`, each process with its own gates), registry-trust and logging flags; each adds its
own (`--signature-policy`, the image signature policy, see docs/image-signatures.md).
`add_common_flags` declares them; `parse` reads them, runs the checks that need every flag
(feature gates, TLS profile) and sets `args.features` (each gate's state) and `args.tls` (the
`tlsprofile.Profile` of every TLS server); `manager_options` turns them into the runtime's
`ManagerOptions` and `registry_options` into the registry client's `oci.ClientOptions`;
`--api-server-timeout` bounds `startup.wait_for_api_server` (called by `main.connect`).
`/metrics` is HTTPS for authorized callers by default (see docs/observability/metrics.md);
`--no-metrics-secure` serves plain HTTP, for local runs only.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from collections.abc import Sequence
from pathlib import Path

from olm import oci, version
from olm.api import names
from olm.compat import httpproxy
from olm.process import featuregates, startup, tlsflags
from olm_runtime import cache, logging
from olm_runtime.client import GroupVersionKind
from olm_runtime.manager import (
    LeaderElectionOptions,
    ManagerOptions,
    SecureMetricsOptions,
    WebhookOptions,
    tlsprofile,
)

__all__ = [
    "WATCH_RENEWAL",
    "add_common_flags",
    "manager_options",
    "parse",
    "registry_options",
    "seconds",
    "secure_metrics",
]

WATCH_RENEWAL = cache.ReflectorOptions(min_watch_timeout=1800.0, max_watch_timeout=3600.0)
"""Each watch asks the API server to end it after 30 to 60 minutes (its own range for a watch that
names no timeout, `--min-request-timeout` to twice that), not client-go's 5 to 10. At rest these
renewals are all the requests the processes send: with drift watches per ServiceAccount, 100 watches
for 20 extensions renewed 20 times a minute (`make bench-rest`). Renewing often moves a watch to
another API server only when it opens a connection of its own (HTTP/1.1, as through a proxy);
watches travel as HTTP/2 streams of the connection already open, so a renewal moves nothing. A watch
that went silent is still reopened after 90 s without a line (the reflector's inactivity watchdog),
and a connection that stops answering is closed after 45 s (HTTP/2 PING)."""


def seconds(text: str) -> float:
    """An argparse type: a non-negative number of seconds."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value >= 0:  # also rejects nan
        raise argparse.ArgumentTypeError(f"must be zero or more seconds: {text!r}")
    return value


def add_common_flags(
    parser: argparse.ArgumentParser,
    *,
    lease_name: str,
    leader_help: str,
    metrics_port: int,
    gates: featuregates.Gates,
) -> None:
    """The shared flags; `metrics_port` is the process's default `/metrics` port (upstream's: 7443
    for catalogd, 8443 for operator-controller), `gates` the process's `--feature-gates`."""
    parser.add_argument(
        "--version",
        action="version",
        version=f"%(prog)s {version.installed()}",
        help="print the version and exit",
    )
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
    parser.add_argument(
        "--metrics-bind-address", default=f":{metrics_port}", help="/metrics address, '0' to disable"
    )
    parser.add_argument(
        "--metrics-secure",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="serve /metrics over HTTPS (--tls-cert/--tls-key, else self-signed) to callers the API "
        "server allows 'get' on the non-resource URL /metrics (TokenReview + SubjectAccessReview); "
        "--no-metrics-secure serves plain HTTP to anyone who reaches the port: local runs only",
    )
    parser.add_argument("--health-probe-bind-address", default=":8081", help="/healthz and /readyz address")
    parser.add_argument("--system-namespace", default=names.DEFAULT_SYSTEM_NAMESPACE, help="where OLM runs")
    parser.add_argument(
        "--global-pull-secret",
        help="<namespace>/<name> of a dockerconfigjson Secret used for every pull (watched: no restart)",
    )
    parser.add_argument(
        "--pull-cas-dir",
        type=Path,
        help="directory of extra PEM CA bundles trusted for registries (re-read when they change)",
    )
    parser.add_argument(
        "--registries-conf",
        type=Path,
        default=oci.DEFAULT_REGISTRIES_CONF,
        help="registries.conf (v2) whose mirrors, prefix rewrites and blocked registries apply to every "
        "pull (re-read when it changes; a missing file means none)",
    )
    parser.add_argument(
        "--signature-policy",
        type=Path,
        default=oci.DEFAULT_POLICY_PATH,
        help="containers-policy.json(5) file that catalog and bundle images are verified against "
        "(re-read when it changes; when it does not exist, every image is accepted, as upstream does)",
    )
    parser.add_argument(
        "--log-format",
        choices=logging.FORMATS,
        default="json",
        help="json: one object per line; text: key=value lines for people (console: the same as text)",
    )
    parser.add_argument("--log-level", choices=("debug", "info", "warning", "error"), default="info")
    featuregates.add_flag(parser, gates)
    tlsflags.add_flags(parser)


def parse(parser: argparse.ArgumentParser, argv: Sequence[str] | None = None) -> argparse.Namespace:
    """`parser.parse_args(argv)`, then what needs every flag read: `args.features` (each gate's
    state) and `args.tls` (the TLS profile). A refusal exits through `parser.error` (usage, the
    message, exit code 2), as any other bad flag does."""
    args = parser.parse_args(argv)
    try:
        args.features = args.feature_gates.resolve()
    except ValueError as e:
        parser.error(f"argument --feature-gates: {e}")
    try:
        args.tls = tlsflags.profile_from(args)
    except tlsprofile.Unsupported as e:
        parser.error(f"argument --tls-profile: {e}")
    return args


def secure_metrics(
    cert_file: Path | None, key_file: Path | None, tls_profile: tlsprofile.Profile
) -> SecureMetricsOptions:
    """Secure metrics serving `cert_file` and `key_file` (watched for rotation), or a self-signed
    certificate when neither is given, under `tls_profile`. Both files must sit in one directory,
    as a mounted Secret's do (the server watches that directory)."""
    if cert_file is None and key_file is None:
        return SecureMetricsOptions(tls_profile=tls_profile)
    if cert_file is None or key_file is None:
        raise ValueError("give both --tls-cert and --tls-key, or neither")
    if cert_file.parent != key_file.parent:
        raise ValueError(f"--tls-cert and --tls-key must be in one directory: {cert_file}, {key_file}")
    return SecureMetricsOptions(
        cert_dir=cert_file.parent, cert_name=cert_file.name, key_name=key_file.name, tls_profile=tls_profile
    )


def manager_options(
    args: argparse.Namespace,
    *,
    webhook: WebhookOptions | None = None,
    scoped: Sequence[GroupVersionKind] = (),
    scope_selector: str = "",
) -> ManagerOptions:
    """The manager of a process started with the common flags (and `--tls-cert`/`--tls-key`, which
    both processes define: the metrics server's certificate), as `parse` read them. Every TLS server,
    a `webhook` given included, serves under `args.tls`. With `scope_selector` (the
    `OLM_TESTING_SCOPE_SELECTOR` seam) the cache holds only the objects of `scoped` kinds that it
    matches, so the process reconciles no other."""
    by_kind = {kind: cache.KindOptions(label_selector=scope_selector) for kind in scoped if scope_selector}
    election = None
    if args.leader_elect:
        election = LeaderElectionOptions(
            lease_name=args.leader_election_id,
            namespace=args.leader_election_namespace or args.system_namespace,
        )
    return ManagerOptions(
        leader_election=election,
        metrics_bind_address=args.metrics_bind_address,
        metrics_secure=secure_metrics(args.tls_cert, args.tls_key, args.tls) if args.metrics_secure else None,
        health_probe_bind_address=args.health_probe_bind_address,
        webhook=dataclasses.replace(webhook or WebhookOptions(), tls_profile=args.tls),
        # Compact: operator-controller caches an extension, its revisions and its ServiceAccounts per
        # installed extension, and reads one or two of them per reconcile.
        cache=cache.CacheOptions(by_kind=by_kind, reflector=WATCH_RENEWAL, compact=True),
    )


def registry_options(args: argparse.Namespace, *, cache_dir: Path, user_agent: str) -> oci.ClientOptions:
    """The registry client of a process started with the common flags: blobs under `cache_dir/blobs`,
    the `--pull-cas-dir` CAs and the `--registries-conf` mirrors (both re-read when they change),
    the proxies the environment names (`HTTPS_PROXY`, `NO_PROXY`), and every image checked against
    the `--signature-policy` file (re-read too). The `--global-pull-secret` credentials come later,
    from `pullconfig.follow_global_pull_secret`."""
    return oci.ClientOptions(
        cache_dir=cache_dir / "blobs",
        ca_dir=args.pull_cas_dir,
        registries_conf=args.registries_conf,
        user_agent=user_agent,
        proxies=httpproxy.Proxies.from_environ(os.environ),
        verifier=oci.SignaturePolicy(args.signature_policy),
    )
