"""Options of the ClusterObjectSet controller."""

from __future__ import annotations

from dataclasses import dataclass

from olm.api import names
from olm.operator_controller.clusterobjectset.identity import IDENTITY_POLICY

__all__ = ["Options"]


@dataclass(frozen=True, kw_only=True)
class Options:
    """How the controller runs; every field has a production default."""

    system_namespace: str = names.DEFAULT_SYSTEM_NAMESPACE
    """Namespace of referenced Secrets whose `ref.namespace` is empty."""
    allow_own_identity: bool = False
    """Apply revisions without ServiceAccount annotations with the controller's own identity.
    Off by default: content is applied only as a ServiceAccount."""
    identity_policy: str = IDENTITY_POLICY
    """Name of the ValidatingAdmissionPolicy (and of its binding) that must be in force before a
    revision is applied as the ServiceAccount it names (`identity.IdentityPolicy`); empty: not
    checked, for clusters that enforce the same rule by other means."""
    field_manager: str = "olm.operatorframework.io/clusterobjectset"
    """Server-side apply field manager of every managed object (shared by all revisions, so a
    newer revision's apply removes fields an older one set and no longer wants)."""
    retry_interval: float = 10.0
    """Seconds before a revision that hit a retryable problem (collision, missing Secret,
    forbidden write) is reconciled again."""
    shared_drift_watches: bool = False
    """Watch managed objects as the controller itself, one informer per kind for every revision,
    where the controller may list and watch the kind in all namespaces (`watches`). Off by default:
    managed objects are read only as the revisions' ServiceAccounts."""
    drift_poll_interval: float = 30.0
    """Seconds between reconciles of an Active revision that manages objects of a kind its
    ServiceAccount may not list and watch (see `watches`): the longest such drift goes unrepaired."""
    teardown_interval: float = 5.0
    """Seconds between checks while objects being deleted still exist."""
    deadline_minute_seconds: float = 60.0
    """Seconds in one minute of `progressDeadlineMinutes` (lowered only by tests, through
    `olm.process.testing_seams`)."""
    max_object_bytes: int = 10 * 1024 * 1024
    """Largest decompressed manifest accepted from a referenced Secret."""
    apply_concurrency: int = 16
    """Objects of one phase applied at the same time."""
    max_concurrent_reconciles: int = 4
    """Revisions reconciled at the same time."""
