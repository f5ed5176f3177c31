"""The status a ClusterExtension reports: computed from what one reconcile found (`compute`, pure),
then written with the events its changes deserve (`write`).

| situation                                   | Installed              | Progressing                      |
|---------------------------------------------|------------------------|----------------------------------|
| a revision has rolled out                   | True  Succeeded        | from the newest revision         |
| nothing rolled out, pipeline failed         | False Failed           | True Retrying / False Blocked... |
| nothing rolled out yet                      | False Absent           | True RollingOut                  |

Progressing from the newest active revision: Succeeded -> True/Succeeded "Desired state reached";
RollingOut, Retrying (collisions), Blocked and ProgressDeadlineExceeded are mirrored with the
revision's message. A failure of this reconcile (resolution, unpack, render, preflight, permissions)
takes precedence: True/Retrying when retrying may help, False/Blocked or False/InvalidConfiguration
when only a change of spec or catalog can. `Available` is mirrored from the newest active revision.
Deprecation conditions come from the catalog; Unknown when its data could not be read.

Once something is installed, `UpdateAvailable` says whether a newer bundle can be reached and
`UpdateHeld` whether `spec.upgrade` keeps a step from applying, and `status.update` holds the
same as data; when the catalogs could not be read they keep what they said before.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from olm.api import conditions as api
from olm.api import revisions
from olm.api.kinds import CLUSTER_EXTENSION
from olm.api.revisions import RevisionStates
from olm.pipeline import plan
from olm.pipeline.resolve import Deprecation
from olm_runtime import conditions, events
from olm_runtime.client import Client, errors

__all__ = ["TRUNCATED_SUFFIX", "Failure", "Report", "compute", "truncate", "write"]

TRUNCATED_SUFFIX = "\n\n... [message truncated]"


def truncate(message: str, limit: int = conditions.MAX_MESSAGE_LENGTH) -> str:
    """Cap a condition message at the API's limit, saying so at the end."""
    if len(message) <= limit:
        return message
    return message[: limit - len(TRUNCATED_SUFFIX)] + TRUNCATED_SUFFIX


@dataclass(frozen=True, kw_only=True)
class Failure:
    """Why this reconcile stopped before the revision was up to date."""

    reason: str
    """`Retrying`, `Blocked` or `InvalidConfiguration`."""
    message: str
    """The condition's message: upstream's text where upstream defines one."""
    detail: str = ""
    """What this implementation adds to `message` (a resolution failure's catalog-by-catalog
    account and advice): it goes into the `Failed` Event, never into the condition."""

    @property
    def explained(self) -> str:
        """The Event's message: the condition's, then the detail."""
        return f"{self.message}; {self.detail}" if self.detail else self.message

    @property
    def terminal(self) -> bool:
        return self.reason != api.REASON_RETRYING


@dataclass(frozen=True, kw_only=True)
class Report:
    conditions: list[dict[str, Any]]
    install: dict[str, Any] | None
    active_revisions: list[dict[str, Any]]
    update: dict[str, Any] | None
    """`status.update`."""


def _update_rows(updates: plan.Updates) -> list[tuple[str, conditions.Status, str, str]]:
    available = updates.available
    if available is not None:
        bundle = available.bundle
        path = " -> ".join(available.path)
        row: tuple[str, conditions.Status, str, str] = (
            api.TYPE_UPDATE_AVAILABLE,
            "True",
            api.REASON_UPDATE_AVAILABLE,
            f'bundle "{bundle.name}" ({bundle.version}) is available from catalog "{bundle.catalog}" '
            f"(upgrade path: {path})",
        )
    else:
        message = updates.no_graph or "no newer bundle is reachable within spec.source.catalog"
        row = (api.TYPE_UPDATE_AVAILABLE, "False", api.REASON_UP_TO_DATE, message)
    held: tuple[str, conditions.Status, str, str]
    if updates.unreachable_approval is not None:
        held = (
            api.TYPE_UPDATE_HELD,
            "True",
            api.REASON_APPROVAL_NOT_REACHABLE,
            updates.unreachable_approval,
        )
    elif updates.held is not None:
        held = (api.TYPE_UPDATE_HELD, "True", updates.held.reason, updates.held.message)
    elif updates.installed_unsupported is not None:
        held = (api.TYPE_UPDATE_HELD, "True", api.REASON_CLUSTER_VERSION, updates.installed_unsupported)
    else:
        held = (api.TYPE_UPDATE_HELD, "False", api.REASON_NOT_HELD, "spec.upgrade holds no update")
    return [row, held]


def _update_status(updates: plan.Updates) -> dict[str, Any] | None:
    status: dict[str, Any] = {}
    if updates.available is not None:
        bundle = updates.available.bundle
        status["available"] = {
            "name": bundle.name,
            "version": bundle.version,
            "catalog": bundle.catalog,
            "path": list(updates.available.path),
        }
    if updates.held is not None:
        held = updates.held
        status["held"] = {"name": held.bundle.name, "version": held.bundle.version, "heldBy": held.reason}
        if held.added_permissions:
            status["held"]["addedPermissions"] = list(held.added_permissions[:512])
    return status or None


def _with_rollback(update: dict[str, Any] | None, states: RevisionStates) -> dict[str, Any] | None:
    """`update` with `rolledBack` while the newest revision restores content after a failed update."""
    rest = {k: v for k, v in (update or {}).items() if k != "rolledBack"}
    latest = states.latest
    record = latest.rollback if latest is not None else None
    if latest is not None and latest.bundle is not None and record is not None:
        rest["rolledBack"] = {
            "failed": {"name": record.failed_bundle, "version": record.failed_version},
            "restored": {"name": latest.bundle.name, "version": latest.bundle.version},
            "reason": record.reason,
        }
    return rest or None


def _mirror(revision_conditions: Sequence[dict[str, Any]], kind: str) -> dict[str, Any] | None:
    found = conditions.find(revision_conditions, kind)
    return dict(found) if found is not None else None


def _progressing(states: RevisionStates) -> tuple[conditions.Status, str, str]:
    latest = states.latest
    if latest is None:
        return "True", api.REASON_ROLLING_OUT, "No revision created yet"
    found = _mirror(latest.conditions, api.TYPE_PROGRESSING)
    if found is None:
        return (
            "True",
            api.REASON_ROLLING_OUT,
            f"Revision {revisions.message_name(latest.object)} is rolling out.",
        )
    reason = str(found.get("reason") or "")
    if reason == api.REASON_SUCCEEDED:
        return "True", api.REASON_SUCCEEDED, "Desired state reached"
    if reason not in api.CLUSTER_EXTENSION[api.TYPE_PROGRESSING]:
        return "True", api.REASON_ROLLING_OUT, str(found.get("message") or "")
    status: conditions.Status = "False" if found.get("status") == "False" else "True"
    return status, reason, str(found.get("message") or "")


def _deprecations(
    deprecation: Deprecation | None, installed: bool
) -> list[tuple[str, conditions.Status, str, str]]:
    if deprecation is None:
        unknown = "deprecation status unknown: catalog data unavailable"
        rows: list[tuple[str, conditions.Status, str, str]] = [
            (api.TYPE_DEPRECATED, "Unknown", api.REASON_DEPRECATION_STATUS_UNKNOWN, unknown),
            (api.TYPE_PACKAGE_DEPRECATED, "Unknown", api.REASON_DEPRECATION_STATUS_UNKNOWN, unknown),
            (api.TYPE_CHANNEL_DEPRECATED, "Unknown", api.REASON_DEPRECATION_STATUS_UNKNOWN, unknown),
        ]
        if installed:
            rows.append(
                (api.TYPE_BUNDLE_DEPRECATED, "Unknown", api.REASON_DEPRECATION_STATUS_UNKNOWN, unknown)
            )
        else:
            rows.append((api.TYPE_BUNDLE_DEPRECATED, "Unknown", api.REASON_ABSENT, "no bundle installed yet"))
        return rows

    def row(kind: str, messages: Sequence[str], quiet: str) -> tuple[str, conditions.Status, str, str]:
        if messages:
            return (kind, "True", api.REASON_DEPRECATED, "\n".join(messages))
        return (kind, "False", api.REASON_NOT_DEPRECATED, quiet)

    package = [deprecation.package] if deprecation.package else []
    channels = [message for _, message in deprecation.channels]
    bundle = [deprecation.bundle] if deprecation.bundle else []
    return [
        row(api.TYPE_DEPRECATED, [*package, *channels, *bundle], "not deprecated"),
        row(api.TYPE_PACKAGE_DEPRECATED, package, "package not deprecated"),
        row(api.TYPE_CHANNEL_DEPRECATED, channels, "channel not deprecated"),
        row(api.TYPE_BUNDLE_DEPRECATED, bundle, "bundle not deprecated"),
    ]


def compute(
    existing: Sequence[dict[str, Any]],
    states: RevisionStates,
    *,
    failure: Failure | None,
    deprecation: Deprecation | None,
    generation: int | None,
    updates: plan.Updates | None = None,
    previous_update: dict[str, Any] | None = None,
) -> Report:
    """The new status from the old conditions, the revisions and this reconcile's result
    (`updates`: what lies beyond the installed bundle, None when resolution did not run;
    `previous_update`: the `status.update` reported before, kept when it did not)."""
    updated = [dict(c) for c in existing]

    def put(kind: str, status: conditions.Status, reason: str, message: str) -> None:
        conditions.set_condition(
            updated, kind, status, reason=reason, message=truncate(message), observed_generation=generation
        )

    installed = states.installed
    if installed is not None and installed.bundle is not None:
        put(
            api.TYPE_INSTALLED,
            "True",
            api.REASON_SUCCEEDED,
            f"Installed bundle {installed.bundle.image} successfully",
        )
    elif failure is not None and states.latest is None:
        put(api.TYPE_INSTALLED, "False", api.REASON_FAILED, failure.message)
    else:
        put(api.TYPE_INSTALLED, "False", api.REASON_ABSENT, "No bundle installed")

    if failure is not None:
        status: conditions.Status = "False" if failure.terminal else "True"
        put(api.TYPE_PROGRESSING, status, failure.reason, failure.message)
    else:
        put(api.TYPE_PROGRESSING, *_progressing(states))

    latest = states.latest
    available = _mirror(latest.conditions, api.TYPE_AVAILABLE) if latest is not None else None
    if available is not None and available.get("reason") in api.CLUSTER_EXTENSION[api.TYPE_AVAILABLE]:
        put(
            api.TYPE_AVAILABLE,
            available.get("status", "Unknown"),
            str(available.get("reason")),
            str(available.get("message") or ""),
        )
    elif latest is None:
        conditions.remove_condition(updated, api.TYPE_AVAILABLE)

    for kind, status_value, reason, message in _deprecations(deprecation, installed is not None):
        put(kind, status_value, reason, message)

    update = previous_update
    if installed is None:
        for kind in (api.TYPE_UPDATE_AVAILABLE, api.TYPE_UPDATE_HELD):
            conditions.remove_condition(updated, kind)
        update = None
    elif updates is not None:
        for kind, status_value, reason, message in _update_rows(updates):
            put(kind, status_value, reason, message)
        update = _update_status(updates)
    if installed is not None:
        update = _with_rollback(update, states)

    install = None
    if installed is not None and installed.bundle is not None:
        install = {"bundle": {"name": installed.bundle.name, "version": installed.bundle.version}}
    active = [
        {
            "name": r.name,
            "conditions": [
                c for c in r.conditions if c.get("type") in (api.TYPE_PROGRESSING, api.TYPE_AVAILABLE)
            ],
        }
        for r in states.active
    ]
    return Report(conditions=updated, install=install, active_revisions=active, update=update)


async def write(
    client: Client,
    recorder: events.EventRecorder,
    extension: Mapping[str, Any],
    states: RevisionStates,
    *,
    failure: Failure | None,
    deprecation: Deprecation | None,
    updates: plan.Updates | None = None,
) -> Report:
    """Patch the extension's status to what `compute` says, recording events for what changed;
    returns what was reported."""
    current = extension.get("status") or {}
    existing = current.get("conditions") or []
    report = compute(
        existing,
        states,
        failure=failure,
        deprecation=deprecation,
        generation=(extension.get("metadata") or {}).get("generation"),
        updates=updates,
        previous_update=current.get("update"),
    )
    _record_events(recorder, extension, existing, report, failure)
    patch: dict[str, Any] = {}
    if report.conditions != existing:
        patch["conditions"] = report.conditions
    if report.install != current.get("install"):
        patch["install"] = report.install
    if report.active_revisions != (current.get("activeRevisions") or []):
        patch["activeRevisions"] = report.active_revisions or None
    if report.update != current.get("update"):
        patch["update"] = report.update
    if patch:
        with contextlib.suppress(errors.NotFound):
            await client.patch_status(CLUSTER_EXTENSION, extension["metadata"]["name"], {"status": patch})
    return report


def _record_events(
    recorder: events.EventRecorder,
    extension: Mapping[str, Any],
    existing: Sequence[dict[str, Any]],
    report: Report,
    failure: Failure | None,
) -> None:
    before = ((extension.get("status") or {}).get("install") or {}).get("bundle") or {}
    after = (report.install or {}).get("bundle") or {}
    if after and after.get("name") != before.get("name"):
        if before:
            message = (
                f'bundle "{before.get("name")}" ({before.get("version")}) replaced by "{after["name"]}" '
                f"({after.get('version')})"
            )
            recorder.event(extension, events.NORMAL, "Upgraded", message)
        else:
            message = f'bundle "{after["name"]}" version {after.get("version")} installed'
            recorder.event(extension, events.NORMAL, "Installed", message)
    if failure is not None:
        old = conditions.find(existing, api.TYPE_PROGRESSING)
        if old is None or old.get("message") != truncate(failure.message):
            recorder.event(extension, events.WARNING, api.REASON_FAILED, failure.explained)
    _record_update_events(recorder, extension, existing, report)


def _record_update_events(
    recorder: events.EventRecorder,
    extension: Mapping[str, Any],
    existing: Sequence[dict[str, Any]],
    report: Report,
) -> None:
    """One Event when a new update appears, and one when a step starts being held (or held for a
    new reason); the status they are read from survives restarts, so these do not repeat."""
    before = ((extension.get("status") or {}).get("update") or {}).get("available") or {}
    after = (report.update or {}).get("available") or {}
    if after and (after.get("name") != before.get("name")):
        found = conditions.find(report.conditions, api.TYPE_UPDATE_AVAILABLE) or {}
        recorder.event(extension, events.NORMAL, "UpdateAvailable", str(found.get("message") or ""))
    old = conditions.find(existing, api.TYPE_UPDATE_HELD) or {}
    new = conditions.find(report.conditions, api.TYPE_UPDATE_HELD) or {}
    held = new.get("status") == "True"
    if held and (
        old.get("status") != "True"
        or (old.get("reason"), old.get("message")) != (new.get("reason"), new.get("message"))
    ):
        recorder.event(extension, events.NORMAL, "UpdateHeld", str(new.get("message") or ""))
