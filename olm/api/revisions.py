"""A ClusterExtension's revisions, read: which ClusterObjectSets are its own, which one is
installed (the newest active one whose `Succeeded` latch is set), which is the latest (what it is
converging to), and the bundle each was rendered from (its annotations).

Pure reading, shared by operator-controller (which creates revisions with
`olm.operator_controller.applier.revisions`) and olmctl (which explains them).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from olm.api import conditions as api
from olm.api import names
from olm_runtime import conditions, ownerrefs

__all__ = [
    "BundleRef",
    "Revision",
    "RevisionStates",
    "RollbackRecord",
    "message_name",
    "owner_selector",
    "states",
]


@dataclass(frozen=True, kw_only=True)
class BundleRef:
    """The bundle a revision was rendered from, as its annotations say."""

    package: str
    name: str
    version: str
    image: str


@dataclass(frozen=True, kw_only=True)
class RollbackRecord:
    """Why a revision restores an earlier one's content (its `names.ROLLBACK_ANNOTATION`)."""

    failed_bundle: str
    failed_version: str
    reason: str
    generation: int
    """The extension's `metadata.generation` when it rolled back: a later spec is the
    administrator acting, and the failed bundle may be tried again."""

    def annotation(self) -> str:
        return json.dumps(
            {
                "failedBundle": self.failed_bundle,
                "failedVersion": self.failed_version,
                "reason": self.reason,
                "generation": self.generation,
            },
            sort_keys=True,
        )

    @classmethod
    def parse(cls, text: str | None) -> RollbackRecord | None:
        """The record in `text`, or None when there is none or it does not read as one."""
        if not text:
            return None
        try:
            data = json.loads(text)
            return cls(
                failed_bundle=str(data["failedBundle"]),
                failed_version=str(data["failedVersion"]),
                reason=str(data["reason"]),
                generation=int(data["generation"]),
            )
        except (ValueError, KeyError, TypeError):
            return None


@dataclass(frozen=True, kw_only=True)
class Revision:
    name: str
    number: int
    archived: bool
    succeeded: bool
    bundle: BundleRef | None
    digest: str
    object: Mapping[str, Any]
    rollback: RollbackRecord | None = None
    """Set on a revision that restored an earlier one's content after a failed update."""

    @property
    def conditions(self) -> list[dict[str, Any]]:
        return list((self.object.get("status") or {}).get("conditions") or [])

    @classmethod
    def of(cls, cos: Mapping[str, Any]) -> Revision:
        metadata = cos.get("metadata") or {}
        annotations = metadata.get("annotations") or {}
        spec = cos.get("spec") or {}
        bundle = None
        if annotations.get(names.BUNDLE_REFERENCE_ANNOTATION):
            bundle = BundleRef(
                package=annotations.get(names.PACKAGE_NAME_LABEL, ""),
                name=annotations.get(names.BUNDLE_NAME_LABEL, ""),
                version=annotations.get(names.BUNDLE_VERSION_LABEL, ""),
                image=annotations[names.BUNDLE_REFERENCE_ANNOTATION],
            )
        status_conditions = (cos.get("status") or {}).get("conditions") or []
        return cls(
            name=metadata.get("name", ""),
            number=int(spec.get("revision") or 0),
            archived=spec.get("lifecycleState") == "Archived",
            succeeded=conditions.is_true(status_conditions, api.TYPE_SUCCEEDED),
            bundle=bundle,
            digest=annotations.get(names.CONTENT_DIGEST_ANNOTATION, ""),
            object=cos,
            rollback=RollbackRecord.parse(annotations.get(names.ROLLBACK_ANNOTATION)),
        )


@dataclass(frozen=True, kw_only=True)
class RevisionStates:
    """All revisions of one extension, oldest first, and what they mean."""

    all: tuple[Revision, ...]

    @property
    def active(self) -> tuple[Revision, ...]:
        return tuple(r for r in self.all if not r.archived)

    @property
    def installed(self) -> Revision | None:
        """The newest active revision that has rolled out once (its `Succeeded` latch is set)."""
        done = [r for r in self.active if r.succeeded]
        return done[-1] if done else None

    @property
    def latest(self) -> Revision | None:
        """The newest active revision: what the extension is converging to."""
        active = self.active
        return active[-1] if active else None

    @property
    def next_number(self) -> int:
        return max((r.number for r in self.all), default=0) + 1


def message_name(cos: Mapping[str, Any]) -> str:
    """What condition messages call a revision ("Revision <this> is rolling out."): its bundle
    version, as upstream writes it; a revision written by hand has none, and upstream then prints an
    empty word, so its number stands in."""
    metadata = cos.get("metadata") or {}
    version = (metadata.get("annotations") or {}).get(names.BUNDLE_VERSION_LABEL)
    return str(version) if version else str((cos.get("spec") or {}).get("revision") or "")


def owner_selector(extension: str) -> str:
    return f"{names.OWNER_KIND_LABEL}={names.CLUSTER_EXTENSION},{names.OWNER_NAME_LABEL}={extension}"


def states(objects: Iterable[Mapping[str, Any]], extension_uid: str) -> RevisionStates:
    """The revisions among `objects` controlled by the extension with `extension_uid`."""
    mine = [
        Revision.of(cos)
        for cos in objects
        if (controller := ownerrefs.controller_of(cos)) is not None and controller.get("uid") == extension_uid
    ]
    return RevisionStates(all=tuple(sorted(mine, key=lambda r: r.number)))
