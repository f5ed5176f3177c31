"""Condition types and reasons of the three kinds, as data.

`TYPE_*` and `REASON_*` are the strings; `CLUSTER_CATALOG`, `CLUSTER_EXTENSION` and
`CLUSTER_OBJECT_SET` map each condition type a kind reports to the reasons it may carry. Controllers
should only ever write a (type, reason) pair found in its kind's table; a unit test pins the tables
so a change to them is a visible API change.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

__all__ = [
    "CLUSTER_CATALOG",
    "CLUSTER_EXTENSION",
    "CLUSTER_OBJECT_SET",
    "REASON_ABSENT",
    "REASON_APPROVAL_NOT_REACHABLE",
    "REASON_APPROVAL_REQUIRED",
    "REASON_ARCHIVED",
    "REASON_AVAILABLE",
    "REASON_BLOCKED",
    "REASON_CLUSTER_VERSION",
    "REASON_DEPRECATED",
    "REASON_DEPRECATION_STATUS_UNKNOWN",
    "REASON_FAILED",
    "REASON_INVALID_CONFIGURATION",
    "REASON_MIGRATED",
    "REASON_NOT_DEPRECATED",
    "REASON_NOT_HELD",
    "REASON_OUTSIDE_POLICY",
    "REASON_PERMISSION_GROWTH",
    "REASON_PROBES_SUCCEEDED",
    "REASON_PROBE_FAILURE",
    "REASON_PROGRESS_DEADLINE_EXCEEDED",
    "REASON_READINESS",
    "REASON_RECONCILING",
    "REASON_REMOVING",
    "REASON_RETRYING",
    "REASON_ROLLED_BACK",
    "REASON_ROLLING_OUT",
    "REASON_SUCCEEDED",
    "REASON_UNAVAILABLE",
    "REASON_UPDATE_AVAILABLE",
    "REASON_UP_TO_DATE",
    "REASON_USER_SPECIFIED_UNAVAILABLE",
    "TYPE_AVAILABLE",
    "TYPE_BUNDLE_DEPRECATED",
    "TYPE_CHANNEL_DEPRECATED",
    "TYPE_DEPRECATED",
    "TYPE_INSTALLED",
    "TYPE_PACKAGE_DEPRECATED",
    "TYPE_PROGRESSING",
    "TYPE_SERVING",
    "TYPE_SUCCEEDED",
    "TYPE_UPDATE_AVAILABLE",
    "TYPE_UPDATE_HELD",
]

TYPE_INSTALLED: Final = "Installed"
TYPE_PROGRESSING: Final = "Progressing"
TYPE_AVAILABLE: Final = "Available"
TYPE_SUCCEEDED: Final = "Succeeded"
TYPE_SERVING: Final = "Serving"
TYPE_DEPRECATED: Final = "Deprecated"
"""Roll-up: True when any of the package, channel or bundle deprecation conditions is True."""
TYPE_PACKAGE_DEPRECATED: Final = "PackageDeprecated"
TYPE_CHANNEL_DEPRECATED: Final = "ChannelDeprecated"
TYPE_BUNDLE_DEPRECATED: Final = "BundleDeprecated"
TYPE_UPDATE_AVAILABLE: Final = "UpdateAvailable"
"""True when a newer bundle can be reached from the installed one (`status.update.available`)."""
TYPE_UPDATE_HELD: Final = "UpdateHeld"
"""True when `spec.upgrade` keeps a step from applying (`status.update.held`)."""

REASON_SUCCEEDED: Final = "Succeeded"
REASON_FAILED: Final = "Failed"
REASON_ABSENT: Final = "Absent"
REASON_RETRYING: Final = "Retrying"
"""A retryable error: the controller keeps trying (with backoff)."""
REASON_BLOCKED: Final = "Blocked"
"""A terminal error: nothing changes until someone edits the object or its inputs."""
REASON_INVALID_CONFIGURATION: Final = "InvalidConfiguration"
REASON_ROLLING_OUT: Final = "RollingOut"
REASON_PROGRESS_DEADLINE_EXCEEDED: Final = "ProgressDeadlineExceeded"
REASON_DEPRECATED: Final = "Deprecated"
REASON_NOT_DEPRECATED: Final = "NotDeprecated"
REASON_DEPRECATION_STATUS_UNKNOWN: Final = "DeprecationStatusUnknown"
REASON_AVAILABLE: Final = "Available"
REASON_UNAVAILABLE: Final = "Unavailable"
REASON_USER_SPECIFIED_UNAVAILABLE: Final = "UserSpecifiedUnavailable"
REASON_ARCHIVED: Final = "Archived"
REASON_PROBES_SUCCEEDED: Final = "ProbesSucceeded"
REASON_PROBE_FAILURE: Final = "ProbeFailure"
REASON_RECONCILING: Final = "Reconciling"
REASON_MIGRATED: Final = "Migrated"
REASON_UPDATE_AVAILABLE: Final = "UpdateAvailable"
REASON_UP_TO_DATE: Final = "UpToDate"
REASON_APPROVAL_REQUIRED: Final = "ApprovalRequired"
"""`spec.upgrade.automatic: None`: every update waits for `approvedVersion`."""
REASON_OUTSIDE_POLICY: Final = "OutsidePolicy"
"""The update's semantic-version class is beyond `spec.upgrade.automatic`."""
REASON_APPROVAL_NOT_REACHABLE: Final = "ApprovalNotReachable"
"""`spec.upgrade.approvedVersion` names a version the installed bundle cannot move to."""
REASON_PERMISSION_GROWTH: Final = "PermissionGrowth"
"""The update's Roles and ClusterRoles grant more than the installed bundle's (roadmap F14)."""
REASON_CLUSTER_VERSION: Final = "ClusterVersion"
"""The update, or the installed bundle, does not run on this cluster's Kubernetes version."""
REASON_READINESS: Final = "Readiness"
"""The installed operator's OperatorCondition says it is not upgradeable (roadmap F25)."""
REASON_ROLLED_BACK: Final = "RolledBack"
"""The update did not roll out within its progress deadline and was rolled back (roadmap F23)."""
REASON_NOT_HELD: Final = "NotHeld"
REASON_REMOVING: Final = "Removing"
"""Being deleted: the message says which stage of the removal it waits on (roadmap F16, F17)."""


def _table(entries: dict[str, tuple[str, ...]]) -> Mapping[str, frozenset[str]]:
    return MappingProxyType({kind: frozenset(reasons) for kind, reasons in entries.items()})


_DEPRECATION_REASONS = (REASON_DEPRECATED, REASON_NOT_DEPRECATED, REASON_DEPRECATION_STATUS_UNKNOWN)
_REVISION_AVAILABLE_REASONS = (
    REASON_PROBES_SUCCEEDED,
    REASON_PROBE_FAILURE,
    REASON_ROLLING_OUT,
    REASON_RECONCILING,
    REASON_ARCHIVED,
    REASON_MIGRATED,
)

CLUSTER_CATALOG: Final = _table(
    {
        TYPE_SERVING: (REASON_AVAILABLE, REASON_UNAVAILABLE, REASON_USER_SPECIFIED_UNAVAILABLE),
        TYPE_PROGRESSING: (REASON_SUCCEEDED, REASON_RETRYING, REASON_BLOCKED),
    }
)

CLUSTER_EXTENSION: Final = _table(
    {
        TYPE_INSTALLED: (REASON_SUCCEEDED, REASON_FAILED, REASON_ABSENT),
        TYPE_PROGRESSING: (
            REASON_SUCCEEDED,
            REASON_RETRYING,
            REASON_BLOCKED,
            REASON_INVALID_CONFIGURATION,
            REASON_ROLLING_OUT,
            REASON_PROGRESS_DEADLINE_EXCEEDED,
            REASON_REMOVING,
        ),
        TYPE_DEPRECATED: _DEPRECATION_REASONS,
        TYPE_PACKAGE_DEPRECATED: _DEPRECATION_REASONS,
        TYPE_CHANNEL_DEPRECATED: _DEPRECATION_REASONS,
        TYPE_BUNDLE_DEPRECATED: (*_DEPRECATION_REASONS, REASON_ABSENT),
        # Mirrored from the installed ClusterObjectSet.
        TYPE_AVAILABLE: _REVISION_AVAILABLE_REASONS,
        TYPE_UPDATE_AVAILABLE: (REASON_UPDATE_AVAILABLE, REASON_UP_TO_DATE),
        TYPE_UPDATE_HELD: (
            REASON_APPROVAL_REQUIRED,
            REASON_OUTSIDE_POLICY,
            REASON_APPROVAL_NOT_REACHABLE,
            REASON_PERMISSION_GROWTH,
            REASON_CLUSTER_VERSION,
            REASON_READINESS,
            REASON_ROLLED_BACK,
            REASON_NOT_HELD,
        ),
    }
)

CLUSTER_OBJECT_SET: Final = _table(
    {
        TYPE_PROGRESSING: (
            REASON_ROLLING_OUT,
            REASON_RETRYING,
            REASON_SUCCEEDED,
            REASON_BLOCKED,
            REASON_ARCHIVED,
            REASON_PROGRESS_DEADLINE_EXCEEDED,
            REASON_REMOVING,
        ),
        TYPE_AVAILABLE: _REVISION_AVAILABLE_REASONS,
        # A latch: set once the rollout first completes, never unset.
        TYPE_SUCCEEDED: (REASON_SUCCEEDED,),
    }
)
