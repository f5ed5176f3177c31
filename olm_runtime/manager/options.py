"""The manager's options, with controller-runtime's defaults."""

from __future__ import annotations

import dataclasses
import socket
import uuid
from pathlib import Path
from typing import ClassVar

from olm_runtime.cache import CacheOptions
from olm_runtime.events import BroadcasterOptions
from olm_runtime.manager import _http
from olm_runtime.manager.certwatcher import ServingCertificate
from olm_runtime.manager.leaderelection import JITTER_FACTOR
from olm_runtime.manager.webhook import WebhookOptions

__all__ = [
    "SERVICE_ACCOUNT_NAMESPACE_FILE",
    "LeaderElectionOptions",
    "ManagerOptions",
    "SecureMetricsOptions",
    "default_identity",
]

SERVICE_ACCOUNT_NAMESPACE_FILE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
"""Where a Pod finds its own namespace; the default namespace of the leader-election Lease."""


def default_identity() -> str:
    """`<hostname>_<random uuid>`: unique per process, and says which Pod holds the lease."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


@dataclasses.dataclass(frozen=True, kw_only=True)
class LeaderElectionOptions:
    """Leader election on a `coordination.k8s.io/v1` Lease (see `leaderelection`)."""

    lease_name: str
    """The Lease's name, shared by every replica of one controller (controller-runtime's ID)."""
    namespace: str | None = None
    """The Lease's namespace; None means the Pod's own namespace (an error outside a cluster)."""
    lease_duration: float = 15.0
    """Seconds a standby waits, after the last change it saw to the Lease, before taking it over."""
    renew_deadline: float = 10.0
    """Seconds the leader keeps retrying a renewal before it gives up leadership (and the manager
    stops)."""
    retry_period: float = 2.0
    """Seconds between renewals by the leader and between attempts by standbys."""
    identity: str | None = None
    """This replica's holder identity; None means `default_identity()`."""
    release_on_cancel: bool = True
    """Release the Lease when the manager stops cleanly, so a standby takes over at once instead of
    after `lease_duration`. Safe because the manager releases only after the leader runnables ended."""

    def __post_init__(self) -> None:
        if not self.lease_name:
            raise ValueError("leader election needs a lease_name")
        if self.retry_period <= 0:
            raise ValueError("retry_period must be positive")
        if self.renew_deadline <= JITTER_FACTOR * self.retry_period:
            raise ValueError(f"renew_deadline must be greater than {JITTER_FACTOR} x retry_period")
        if self.lease_duration <= self.renew_deadline:
            raise ValueError("lease_duration must be greater than renew_deadline")

    def resolved_namespace(self) -> str:
        """`namespace`, else the Pod's namespace; raises `ValueError` outside a cluster."""
        if self.namespace:
            return self.namespace
        try:
            return SERVICE_ACCOUNT_NAMESPACE_FILE.read_text().strip()
        except OSError:
            raise ValueError(
                "leader election needs a namespace: set LeaderElectionOptions.namespace "
                "(not running in a cluster, so the Pod's namespace is unknown)"
            ) from None


@dataclasses.dataclass(frozen=True, kw_only=True)
class SecureMetricsOptions(ServingCertificate):
    """Serve `/metrics` over HTTPS to callers the API server authenticates (TokenReview) and
    authorizes (SubjectAccessReview: `get` on the non-resource URL `/metrics`), as controller-runtime's
    `SecureServing` with its authentication and authorization filter. The manager's client must be
    allowed to `create` `tokenreviews` and `subjectaccessreviews`; scrapers need a ClusterRole with
    `nonResourceURLs: ["/metrics"]`, `verbs: ["get"]`. See `_metrics_auth` for what is remembered
    and for how long.

    The certificate fields are `ServingCertificate`'s; `cert_dir` None (the default) serves a
    self-signed certificate generated at start (encrypted, but scrapers cannot verify it). The
    address is `ManagerOptions.metrics_bind_address`."""

    _server_name: ClassVar[str] = "the metrics server"


@dataclasses.dataclass(frozen=True, kw_only=True)
class ManagerOptions:
    """How a `Manager` runs. Every field has controller-runtime's default."""

    leader_election: LeaderElectionOptions | None = None
    """None: every replica runs everything. Set it to run leader runnables on one replica at a time."""
    metrics_bind_address: str = ":8080"
    """Where `/metrics` is served: `":8080"` (every interface), `"127.0.0.1:8080"`, or `"0"` (off)."""
    metrics_secure: SecureMetricsOptions | None = None
    """None: `/metrics` is plain HTTP that anyone reaching the port reads (controller-runtime's
    default). Set it to serve HTTPS to authorized callers only; then `/metrics` cannot share its
    address with the probes (kubelets probe without a token)."""
    health_probe_bind_address: str = "0"
    """Where `/healthz` and `/readyz` are served; `"0"` (the default) turns them off. The same address
    as `metrics_bind_address` serves all three from one listener."""
    graceful_shutdown_timeout: float | None = 30.0
    """Seconds runnables get to stop once the manager is told to stop; None waits for ever, 0 does not
    wait (runnables are cancelled and the manager returns once they have noticed)."""
    cache_sync_timeout: float = 120.0
    """Seconds the caches may take to sync at start before `run()` fails."""
    webhook: WebhookOptions = dataclasses.field(default_factory=WebhookOptions)
    """The webhook server's address and certificate; the server runs only if a handler is registered."""
    cache: CacheOptions = dataclasses.field(default_factory=CacheOptions)
    """What the manager's cache watches (namespaces, selectors, transforms); unused when the
    `Manager` is given a cache."""
    events: BroadcasterOptions = dataclasses.field(default_factory=BroadcasterOptions)
    """Buffering and aggregation of the Events written by `Manager.event_recorder` recorders."""

    def __post_init__(self) -> None:
        metrics = _http.parse_bind_address(self.metrics_bind_address)
        probes = _http.parse_bind_address(self.health_probe_bind_address)
        if self.metrics_secure is not None and metrics is not None and metrics == probes:
            raise ValueError(
                "secure metrics need their own address: health probes carry no token "
                "(give metrics_bind_address and health_probe_bind_address different ports)"
            )
        if self.graceful_shutdown_timeout is not None and self.graceful_shutdown_timeout < 0:
            raise ValueError("graceful_shutdown_timeout must be None or at least 0")
        if self.cache_sync_timeout <= 0:
            raise ValueError("cache_sync_timeout must be positive")
