"""The ClusterExtension status computed from revisions and a reconcile's failure."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from olm.api import conditions as api
from olm.api import names
from olm.api.revisions import RevisionStates, RollbackRecord, states
from olm.operator_controller.clusterextension import status
from olm.pipeline import plan
from olm.pipeline.resolve import Deprecation, ResolvedBundle, Update
from olm_runtime import events

UID = "ext-uid"


def revision(
    number: int,
    *,
    archived: bool = False,
    progressing: tuple[str, str, str] | None = None,
    available: tuple[str, str, str] | None = None,
    succeeded: bool = False,
    version: str = "1.0.0",
) -> dict[str, Any]:
    conditions = []
    for kind, value in ((api.TYPE_PROGRESSING, progressing), (api.TYPE_AVAILABLE, available)):
        if value is not None:
            conditions.append(
                {
                    "type": kind,
                    "status": value[0],
                    "reason": value[1],
                    "message": value[2],
                    "lastTransitionTime": "t",
                }
            )
    if succeeded:
        conditions.append(
            {
                "type": "Succeeded",
                "status": "True",
                "reason": "Succeeded",
                "message": "",
                "lastTransitionTime": "t",
            }
        )
    return {
        "metadata": {
            "name": f"ext-{number}",
            "ownerReferences": [{"uid": UID, "controller": True}],
            "annotations": {
                names.PACKAGE_NAME_LABEL: "pkg",
                names.BUNDLE_NAME_LABEL: f"pkg.v{version}",
                names.BUNDLE_VERSION_LABEL: version,
                names.BUNDLE_REFERENCE_ANNOTATION: f"registry.test/pkg@sha256:{version.replace('.', '') * 8}",
            },
        },
        "spec": {"revision": number, "lifecycleState": "Archived" if archived else "Active"},
        "status": {"conditions": conditions},
    }


def find(report: status.Report, kind: str) -> dict[str, Any]:
    found = [c for c in report.conditions if c["type"] == kind]
    assert len(found) == 1, report.conditions
    return found[0]


def test_installed_revision_reports_installed_and_desired_state() -> None:
    revs = states(
        [
            revision(
                1,
                progressing=("True", "Succeeded", "Revision 1 has rolled out."),
                available=("True", "ProbesSucceeded", "ok"),
                succeeded=True,
            )
        ],
        UID,
    )
    report = status.compute([], revs, failure=None, deprecation=Deprecation(), generation=3)
    installed = find(report, api.TYPE_INSTALLED)
    assert (installed["status"], installed["reason"]) == ("True", "Succeeded")
    assert installed["message"].startswith("Installed bundle registry.test/pkg@sha256:")
    assert installed["observedGeneration"] == 3
    progressing = find(report, api.TYPE_PROGRESSING)
    assert (progressing["status"], progressing["reason"], progressing["message"]) == (
        "True",
        "Succeeded",
        "Desired state reached",
    )
    assert find(report, api.TYPE_AVAILABLE)["reason"] == "ProbesSucceeded"
    assert report.install == {"bundle": {"name": "pkg.v1.0.0", "version": "1.0.0"}}
    assert [r["name"] for r in report.active_revisions] == ["ext-1"]
    assert find(report, api.TYPE_DEPRECATED)["reason"] == api.REASON_NOT_DEPRECATED
    assert find(report, api.TYPE_BUNDLE_DEPRECATED)["message"] == "bundle not deprecated"


def test_a_rolling_out_upgrade_keeps_the_installed_bundle_and_mirrors_the_newer_revision() -> None:
    revs = states(
        [
            revision(1, progressing=("True", "Succeeded", "done"), succeeded=True),
            revision(
                2,
                progressing=("True", "RollingOut", "Revision 1.1.0 is rolling out."),
                available=("False", "ProbeFailure", "Object Deployment.apps/v1 ns/op: not available"),
                version="1.1.0",
            ),
        ],
        UID,
    )
    report = status.compute([], revs, failure=None, deprecation=Deprecation(), generation=1)
    assert report.install == {"bundle": {"name": "pkg.v1.0.0", "version": "1.0.0"}}
    progressing = find(report, api.TYPE_PROGRESSING)
    assert (progressing["reason"], progressing["message"]) == ("RollingOut", "Revision 1.1.0 is rolling out.")
    assert find(report, api.TYPE_AVAILABLE)["reason"] == "ProbeFailure"
    assert [r["name"] for r in report.active_revisions] == ["ext-1", "ext-2"]


def test_archived_revisions_are_not_active_and_not_installed() -> None:
    revs = states(
        [revision(1, archived=True, succeeded=True), revision(2, succeeded=True, version="2.0.0")], UID
    )
    assert revs.installed is not None
    assert revs.installed.name == "ext-2"
    assert [r.name for r in revs.active] == ["ext-2"]
    assert revs.next_number == 3


def test_revisions_of_other_owners_are_ignored() -> None:
    other = revision(7)
    other["metadata"]["ownerReferences"] = [{"uid": "someone-else", "controller": True}]
    assert states([other], UID).all == ()


def test_a_failure_before_anything_is_installed() -> None:
    failure = status.Failure(reason=api.REASON_RETRYING, message='no bundles found for package "x"')
    report = status.compute([], RevisionStates(all=()), failure=failure, deprecation=None, generation=1)
    installed = find(report, api.TYPE_INSTALLED)
    assert (installed["status"], installed["reason"], installed["message"]) == (
        "False",
        "Failed",
        'no bundles found for package "x"',
    )
    progressing = find(report, api.TYPE_PROGRESSING)
    assert (progressing["status"], progressing["reason"]) == ("True", "Retrying")
    assert not [c for c in report.conditions if c["type"] == api.TYPE_AVAILABLE]
    assert find(report, api.TYPE_DEPRECATED)["reason"] == api.REASON_DEPRECATION_STATUS_UNKNOWN
    bundle = find(report, api.TYPE_BUNDLE_DEPRECATED)
    assert (bundle["status"], bundle["reason"]) == ("Unknown", api.REASON_ABSENT)
    assert report.install is None
    assert report.active_revisions == []


def test_terminal_failures_report_progressing_false_with_their_reason() -> None:
    revs = states([revision(1, progressing=("True", "Succeeded", "done"), succeeded=True)], UID)
    failure = status.Failure(
        reason=api.REASON_INVALID_CONFIGURATION, message="invalid ClusterExtension configuration"
    )
    report = status.compute([], revs, failure=failure, deprecation=None, generation=2)
    progressing = find(report, api.TYPE_PROGRESSING)
    assert (progressing["status"], progressing["reason"]) == ("False", "InvalidConfiguration")
    assert find(report, api.TYPE_INSTALLED)["status"] == "True"  # the installed bundle keeps running
    assert find(report, api.TYPE_BUNDLE_DEPRECATED)["reason"] == api.REASON_DEPRECATION_STATUS_UNKNOWN


def test_deprecations_roll_up_in_order() -> None:
    deprecation = Deprecation(
        package="pkg is gone", channels=(("alpha", "alpha is old"),), bundle="v1 is bad"
    )
    report = status.compute([], RevisionStates(all=()), failure=None, deprecation=deprecation, generation=1)
    assert find(report, api.TYPE_DEPRECATED)["message"] == "pkg is gone\nalpha is old\nv1 is bad"
    assert find(report, api.TYPE_PACKAGE_DEPRECATED)["status"] == "True"
    assert find(report, api.TYPE_CHANNEL_DEPRECATED)["message"] == "alpha is old"
    assert find(report, api.TYPE_BUNDLE_DEPRECATED)["reason"] == api.REASON_DEPRECATED


def test_long_messages_are_truncated_to_the_api_limit_and_say_so() -> None:
    failure = status.Failure(reason=api.REASON_RETRYING, message="x" * 40_000)
    report = status.compute([], RevisionStates(all=()), failure=failure, deprecation=None, generation=1)
    message = find(report, api.TYPE_PROGRESSING)["message"]
    assert len(message) == 32768
    assert message.endswith(status.TRUNCATED_SUFFIX)


def test_unchanged_inputs_change_nothing() -> None:
    revs = states([revision(1, progressing=("True", "Succeeded", "done"), succeeded=True)], UID)
    first = status.compute([], revs, failure=None, deprecation=Deprecation(), generation=1)
    again = status.compute(first.conditions, revs, failure=None, deprecation=Deprecation(), generation=1)
    assert again.conditions == first.conditions


def _updates(*, held: bool = False, unreachable: str | None = None) -> plan.Updates:
    bundle = ResolvedBundle(package="pkg", name="pkg.v1.1.0", version="1.1.0", image="i", catalog="c")
    return plan.Updates(
        available=Update(bundle=bundle, path=("pkg.v1.1.0",)),
        held=plan.Held(bundle=bundle, reason=api.REASON_APPROVAL_REQUIRED, message="waiting")
        if held
        else None,
        unreachable_approval=unreachable,
    )


def test_updates_are_reported_once_something_is_installed() -> None:
    installed = states([revision(1, succeeded=True, progressing=("True", "Succeeded", ""))], UID)
    report = status.compute(
        [], installed, failure=None, deprecation=None, generation=1, updates=_updates(held=True)
    )
    by_type = {c["type"]: c for c in report.conditions}
    assert (by_type["UpdateAvailable"]["status"], by_type["UpdateAvailable"]["reason"]) == (
        "True",
        "UpdateAvailable",
    )
    assert by_type["UpdateAvailable"]["message"] == (
        'bundle "pkg.v1.1.0" (1.1.0) is available from catalog "c" (upgrade path: pkg.v1.1.0)'
    )
    assert (by_type["UpdateHeld"]["status"], by_type["UpdateHeld"]["reason"]) == ("True", "ApprovalRequired")
    assert report.update == {
        "available": {"name": "pkg.v1.1.0", "version": "1.1.0", "catalog": "c", "path": ["pkg.v1.1.0"]},
        "held": {"name": "pkg.v1.1.0", "version": "1.1.0", "heldBy": "ApprovalRequired"},
    }
    # An unreachable approval is what UpdateHeld says, whatever else is held.
    unreachable = status.compute(
        [],
        installed,
        failure=None,
        deprecation=None,
        generation=1,
        updates=_updates(held=True, unreachable="no"),
    )
    held = next(c for c in unreachable.conditions if c["type"] == "UpdateHeld")
    assert (held["reason"], held["message"]) == ("ApprovalNotReachable", "no")


def test_without_a_resolution_the_update_status_stays_as_it_was() -> None:
    installed = states([revision(1, succeeded=True, progressing=("True", "Succeeded", ""))], UID)
    before = status.compute([], installed, failure=None, deprecation=None, generation=1, updates=_updates())
    kept = status.compute(
        before.conditions,
        installed,
        failure=None,
        deprecation=None,
        generation=1,
        previous_update=before.update,
    )
    assert kept.update == before.update
    assert [c for c in kept.conditions if c["type"].startswith("Update")] == [
        c for c in before.conditions if c["type"].startswith("Update")
    ]
    nothing = status.compute(
        before.conditions,
        states([], UID),
        failure=None,
        deprecation=None,
        generation=1,
        previous_update=before.update,
    )
    assert nothing.update is None
    assert not [c for c in nothing.conditions if c["type"].startswith("Update")]


def test_a_rollback_is_reported_while_its_revision_is_the_newest() -> None:
    record = RollbackRecord(
        failed_bundle="pkg.v1.1.0", failed_version="1.1.0", reason="ProgressDeadlineExceeded", generation=4
    )
    assert RollbackRecord.parse(record.annotation()) == record
    assert RollbackRecord.parse("not json") is None
    assert RollbackRecord.parse('{"failedBundle": "x"}') is None
    restoring = revision(3, succeeded=True, progressing=("True", "Succeeded", ""))
    restoring["metadata"]["annotations"][names.ROLLBACK_ANNOTATION] = record.annotation()
    revisions = [revision(1, archived=True), revision(2, archived=True, version="1.1.0"), restoring]
    report = status.compute([], states(revisions, UID), failure=None, deprecation=None, generation=4)
    assert report.update == {
        "rolledBack": {
            "failed": {"name": "pkg.v1.1.0", "version": "1.1.0"},
            "restored": {"name": "pkg.v1.0.0", "version": "1.0.0"},
            "reason": "ProgressDeadlineExceeded",
        }
    }
    # A newer revision without the record: the rollback is history, and so is the report.
    newer = revision(4, progressing=("True", "RollingOut", ""), version="1.1.0")
    report = status.compute(
        [],
        states([*revisions, newer], UID),
        failure=None,
        deprecation=None,
        generation=5,
        previous_update=report.update,
    )
    assert report.update is None


class Recorded(events.EventRecorder):
    """Keeps the Events it is given (no broadcaster: nothing is written)."""

    def __init__(self) -> None:
        self.said: list[tuple[str, str, str]] = []

    def event(
        self,
        obj: Mapping[str, Any],
        type: events.EventType,
        reason: str,
        message: str,
        *,
        action: str | None = None,
        related: Mapping[str, Any] | None = None,
    ) -> None:
        self.said.append((type, reason, message))


def test_a_failures_detail_goes_to_the_event_and_never_to_the_condition() -> None:
    failure = status.Failure(
        reason=api.REASON_RETRYING,
        message='no bundles found for package "x" matching version "9.0.0"',
        detail="catalogs: a (no version in range, highest 1.2.0); change spec.source.catalog.version",
    )
    extension = {
        "apiVersion": "olm.operatorframework.io/v1",
        "kind": "ClusterExtension",
        "metadata": {"name": "e"},
    }
    report = status.compute([], RevisionStates(all=()), failure=failure, deprecation=None, generation=1)
    assert (
        find(report, api.TYPE_PROGRESSING)["message"]
        == 'no bundles found for package "x" matching version "9.0.0"'
    )
    recorder = Recorded()
    status._record_events(recorder, extension, [], report, failure)
    assert recorder.said == [
        (
            "Warning",
            "Failed",
            'no bundles found for package "x" matching version "9.0.0"; '
            "catalogs: a (no version in range, highest 1.2.0); change spec.source.catalog.version",
        )
    ]
    # The same failure again: the condition is unchanged, so no new Event.
    status._record_events(recorder, extension, report.conditions, report, failure)
    assert len(recorder.said) == 1
