"""What one ClusterExtension reconcile learns (`State`), and what the controller works with
(`Context`) and remembers between reconciles (`Memory`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from olm.api.extensionspec import ExtensionSpec
from olm.api.revisions import RevisionStates, RollbackRecord
from olm.operator_controller.applier import PackedRevision
from olm.operator_controller.clusterextension.memo import RenderMemo
from olm.operator_controller.clusterextension.options import Installer, Options
from olm.operator_controller.clusterextension.status import Failure
from olm.pipeline import plan
from olm.pipeline.catalogs import CatalogClient
from olm.pipeline.resolve import Deprecation, ResolvedBundle
from olm.pipeline.unpack import BundleUnpacker
from olm.registryv1 import RegistryV1
from olm_runtime import cache, events
from olm_runtime.client import Client

__all__ = ["Context", "Memory", "State"]


@dataclass
class State:
    """What one reconcile learns; each field has one writer step."""

    extension: dict[str, Any]
    spec: ExtensionSpec
    installer: Installer | None = None
    """check_service_account: the spec's ServiceAccount, else the default installer."""
    states: RevisionStates = field(default_factory=lambda: RevisionStates(all=()))
    """read_revisions (and pack and apply, which bring it up to date)."""
    bundle: ResolvedBundle | None = None
    """resolve (or resolve_image)."""
    deprecation: Deprecation | None = None
    """resolve: None when the catalog data could not be read."""
    updates: plan.Updates | None = None
    """resolve: what lies beyond the installed bundle; None when nothing is installed or the
    catalogs could not be read (the status keeps what it said before)."""
    image: str = ""
    """unpack: the bundle image by digest."""
    registry_v1: RegistryV1 | None = None
    """unpack."""
    properties: str | None = None
    """unpack (the CSV's `olm.properties`), restore and roll_back_failed (the source revision's):
    the revision's `olm.properties` annotation; None when not known or the bundle has none."""
    objects: list[dict[str, Any]] = field(default_factory=list)
    """render."""
    packed: PackedRevision | None = None
    digest: str = ""
    """pack."""
    render_key: str | None = None
    """pack: the digest of what the content was rendered from (`memo.stored_key`), which the
    revision records; None for content restored from a revision."""
    rollback: RollbackRecord | None = None
    """roll_back_failed: why the content restored is rolled out (apply records it)."""
    failure: Failure | None = None
    requeue_after: float | None = None


@dataclass
class Memory:
    """What this process remembers about extensions across reconciles, by extension name."""

    swept: set[str] = field(default_factory=set)
    """Extensions whose leftover Secrets were swept since the process started."""
    resolved: dict[str, str] = field(default_factory=dict)
    """The bundle each extension last resolved to: one `Resolved` event per change (`newly_resolved`)."""
    render: RenderMemo = field(default_factory=RenderMemo)
    """The content digest each extension last rendered, and from what (`memo`)."""
    tag_checked: dict[str, tuple[str, float]] = field(default_factory=dict)
    """The bundle image tag (`spec.source.bundle.ref`) each extension last pulled, and when
    (`time.monotonic`): the next check is due a poll interval later."""

    def newly_resolved(self, name: str, bundle: str, installed: str | None) -> bool:
        """Whether resolving `name` to `bundle` is news worth a `Resolved` event, and remember it.

        News is a bundle other than the one this process last reported. Before it has reported any
        (after a restart) the installed bundle stands in: an earlier process resolved and reported
        it, so a restart re-resolving every extension to what is installed says nothing new.
        """
        reported = self.resolved.get(name, installed)
        self.resolved[name] = bundle
        return bundle != reported

    def forget(self, name: str) -> None:
        self.tag_checked.pop(name, None)
        self.swept.discard(name)
        self.resolved.pop(name, None)
        self.render.forget(name)


@dataclass(frozen=True, kw_only=True)
class Context:
    """What the steps and the removal work with: one per controller."""

    client: Client
    reader: cache.CacheReader
    catalog_client: CatalogClient
    unpacker: BundleUnpacker
    recorder: events.EventRecorder
    options: Options
    memory: Memory = field(default_factory=Memory)
