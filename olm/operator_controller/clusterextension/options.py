"""Options of the ClusterExtension controller."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from olm.api import names

__all__ = ["Installer", "Options"]


@dataclass(frozen=True)
class Installer:
    """The ServiceAccount an extension's revisions are applied as."""

    namespace: str
    name: str

    @classmethod
    def parse(cls, text: str) -> Installer:
        """`<namespace>/<name>`; raises ValueError naming the expected shape."""
        namespace, slash, name = text.partition("/")
        if not slash or not namespace or not name or "/" in name:
            raise ValueError(f"expected <namespace>/<name>, got {text!r}")
        return cls(namespace, name)

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True, kw_only=True)
class Options:
    """How the controller runs; every field has a production default."""

    system_namespace: str = names.DEFAULT_SYSTEM_NAMESPACE
    """Where the Secrets holding revision content live (OLM's own namespace)."""
    cache_dir: Path = Path("/var/cache/operator-controller")
    """Unpacked bundles, one directory per extension and image digest."""
    default_installer: Installer | None = None
    """The ServiceAccount extensions without `spec.serviceAccount` are installed as
    (`--default-service-account`); None holds them until they name one."""
    identity_policy: str = "olm-clusterextension-identity"
    """Name of the ValidatingAdmissionPolicy (and of its binding) that must be in force before an
    extension is installed as the `spec.serviceAccount` it names (`identity_policy`);
    empty: not checked, for clusters that enforce the same rule by other means."""
    retention_limit: int = 5
    """Archived revisions kept per extension; older ones are deleted."""
    retry_interval: float = 10.0
    """Seconds before an extension waiting on something outside its spec (RBAC being granted, a
    catalog coming back, a revision rolling out) is reconciled again."""
    poll_minute_seconds: float = 60.0
    """Seconds in one minute of `spec.source.bundle.pollIntervalMinutes` (shorter only in tests,
    `olm.process.testing_seams`)."""
    max_concurrent_reconciles: int = 4
    """Extensions reconciled at the same time."""
    bundle_webhooks: bool = True
    """Install bundles with webhooks, their serving certificates made by cert-manager; False refuses
    them (upstream's WebhookProviderCertManager gate, `--feature-gates`)."""
    crash_after_secrets: bool = False
    """Testing only: kill the process with SIGKILL right after a revision's Secrets are created and
    before the revision is, to prove a crash there leaves nothing behind. Set by main from
    `olm.process.testing_seams`."""
