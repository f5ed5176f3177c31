"""`olmctl status`'s output from an extension, its revisions and its Events (pure functions)."""

from __future__ import annotations

import datetime
from typing import Any

from olm.api.revisions import Revision
from olm.cli.status import explain
from olm.cli.status.diagnosis import diagnose
from olm.operator_controller.clusterobjectset.rollout import probe_message

NOW = datetime.datetime(2026, 1, 1, 12, 0, tzinfo=datetime.UTC)
SA_MISSING = (
    'service account "nobody" not found in namespace "green": unable to authenticate with the '
    "Kubernetes cluster."
)


MANAGER = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "manager", "namespace": "green"},
}
NOT_AVAILABLE = 'condition "Available" is "False"; expected: "True"'
FAILING = f"Object Deployment.apps/v1 green/manager: {NOT_AVAILABLE}"


def condition(kind: str, status: str, reason: str, message: str) -> dict[str, Any]:
    return {"type": kind, "status": status, "reason": reason, "message": message, "observedGeneration": 2}


EXTENSION: dict[str, Any] = {
    "metadata": {"name": "green", "generation": 2, "uid": "u1"},
    "spec": {
        "namespace": "green",
        "serviceAccount": {"name": "installer"},
        "source": {
            "sourceType": "Catalog",
            "catalog": {"packageName": "kube-green", "version": "0.7.x", "channels": ["alpha"]},
        },
    },
    "status": {
        "install": {"bundle": {"name": "kube-green.v0.7.0", "version": "0.7.0"}},
        "conditions": [
            condition(
                "Installed", "True", "Succeeded", "Installed bundle r/kube-green@sha256:1 successfully"
            ),
            condition("Progressing", "True", "RollingOut", "Revision 0.7.1 is rolling out."),
            condition(
                "Available",
                "False",
                "ProbeFailure",
                probe_message(MANAGER, [NOT_AVAILABLE]),
            ),
            condition("Deprecated", "True", "Deprecated", "alpha is frozen"),
            condition("ChannelDeprecated", "True", "Deprecated", "alpha is frozen"),
            condition("PackageDeprecated", "False", "NotDeprecated", "package not deprecated"),
        ],
    },
}


def cos(number: int, version: str, *, state: str, progressing: str, available: str, probes: str) -> Revision:
    return Revision.of(
        {
            "metadata": {
                "name": f"green-{number}",
                "annotations": {
                    "olm.operatorframework.io/bundle-reference": f"r/kube-green@sha256:{number}",
                    "olm.operatorframework.io/bundle-name": f"kube-green.v{version}",
                    "olm.operatorframework.io/bundle-version": version,
                    "olm.operatorframework.io/package-name": "kube-green",
                },
            },
            "spec": {"revision": number, "lifecycleState": state},
            "status": {
                "conditions": [
                    condition("Progressing", "True", progressing, ""),
                    condition("Available", "True", available, probes),
                ]
            },
        }
    )


REVISIONS = [
    cos(1, "0.7.0", state="Active", progressing="Succeeded", available="ProbesSucceeded", probes="all ready"),
    cos(
        2,
        "0.7.1",
        state="Active",
        progressing="RollingOut",
        available="ProbeFailure",
        probes=probe_message(MANAGER, [NOT_AVAILABLE]),
    ),
]


def event(minutes_ago: int, reason: str, message: str, kind: str = "Normal") -> dict[str, Any]:
    at = (NOW - datetime.timedelta(minutes=minutes_ago)).isoformat().replace("+00:00", "Z")
    return {"type": kind, "reason": reason, "message": message, "eventTime": at}


EVENTS = [event(m, "Resolved", f"event {m}") for m in (90, 70, 50, 30, 10, 3)] + [
    {
        "type": "Normal",
        "reason": "Installing",
        "message": "upgrading",
        "series": {"lastObservedTime": "2026-01-01T11:59:15Z"},
    }
]


def test_status_data() -> None:
    data = explain.status_data(EXTENSION, REVISIONS, EVENTS, diagnose(EXTENSION, REVISIONS))
    assert {k: v for k, v in data.items() if k not in ("conditions", "revisions", "events")} == {
        "name": "green",
        "package": "kube-green",
        "requested": {
            "version": "0.7.x",
            "channels": ["alpha"],
            "catalogSelector": None,
            "upgradeConstraintPolicy": "CatalogProvided",
        },
        "namespace": "green",
        "serviceAccount": "installer",
        "installed": {"bundle": "kube-green.v0.7.0", "version": "0.7.0"},
        "update": None,
        "health": "Progressing",
        "waitingFor": f"green-2 to roll out: {FAILING}",
        "nextStep": "",
        "explanation": "",
        "deprecations": ["alpha is frozen"],
    }
    assert [c["type"] for c in data["conditions"]] == ["Installed", "Progressing", "Available"]
    assert data["revisions"][1] == {
        "name": "green-2",
        "revision": 2,
        "lifecycleState": "Active",
        "bundle": "kube-green.v0.7.1",
        "version": "0.7.1",
        "progressing": "RollingOut",
        "available": "ProbeFailure",
        "probes": FAILING,
    }
    # The newest five, oldest first, whichever time field the writer filled.
    assert [e["message"] for e in data["events"]] == [
        "event 50",
        "event 30",
        "event 10",
        "event 3",
        "upgrading",
    ]


def test_status_text() -> None:
    data = explain.status_data(EXTENSION, REVISIONS, EVENTS, diagnose(EXTENSION, REVISIONS))
    assert explain.status_text(data, NOW) == (
        """Name:        green
Package:     kube-green
Requested:   version 0.7.x, channels alpha
Catalogs:    all
Namespace:   green (ServiceAccount installer)
Installed:   kube-green.v0.7.0 (0.7.0)
Health:      Progressing
Waiting for: green-2 to roll out: Object Deployment.apps/v1 green/manager: condition "Available" is "False"; expected: "True"
Deprecated:  alpha is frozen
Conditions:
  TYPE          STATUS   REASON         MESSAGE
  Installed     True     Succeeded      Installed bundle r/kube-green@sha256:1 successfully
  Progressing   True     RollingOut     Revision 0.7.1 is rolling out.
  Available     False    ProbeFailure   Object Deployment.apps/v1 green/manager: condition "Available" is "False"; expected: "True"
Revisions:
  NAME      STATE    BUNDLE              PROGRESSING   AVAILABLE         PROBES
  green-1   Active   kube-green.v0.7.0   Succeeded     ProbesSucceeded   all ready
  green-2   Active   kube-green.v0.7.1   RollingOut    ProbeFailure      Object Deployment.apps/v1 green/manager: condition "Available" is "False"; expected: "True"
Events:
  AGE   TYPE     REASON       MESSAGE
  50m   Normal   Resolved     event 50
  30m   Normal   Resolved     event 30
  10m   Normal   Resolved     event 10
  3m    Normal   Resolved     event 3
  45s   Normal   Installing   upgrading
"""  # noqa: E501
    )


def test_stuck_before_anything_is_installed() -> None:
    stuck = {
        "metadata": {"name": "green", "generation": 1, "uid": "u1"},
        "spec": {
            "namespace": "green",
            "serviceAccount": {"name": "nobody"},
            "source": {
                "sourceType": "Catalog",
                "catalog": {
                    "packageName": "kube-green",
                    "upgradeConstraintPolicy": "SelfCertified",
                    "selector": {
                        "matchLabels": {"tier": "gold"},
                        "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]}],
                    },
                },
            },
        },
        "status": {
            "conditions": [
                {**condition("Installed", "False", "Failed", SA_MISSING), "observedGeneration": 1},
                {**condition("Progressing", "True", "Retrying", SA_MISSING), "observedGeneration": 1},
            ]
        },
    }
    data = explain.status_data(stuck, [], [], diagnose(stuck, []))
    assert explain.status_text(data, NOW) == (
        f"""Name:        green
Package:     kube-green
Requested:   any version, upgradeConstraintPolicy SelfCertified
Catalogs:    selector tier=gold, tier In (a,b)
Namespace:   green (ServiceAccount nobody)
Installed:   nothing yet
Health:      Stuck
Waiting for: ServiceAccount "nobody" in namespace "green"
Next step:   create ServiceAccount "nobody" in namespace "green" with the permissions the bundle needs (olmctl rbac kube-green --namespace green --service-account nobody prints them)
Conditions:
  TYPE          STATUS   REASON     MESSAGE
  Installed     False    Failed     {SA_MISSING}
  Progressing   True     Retrying   {SA_MISSING}
Revisions:
  none yet
Events:
  none (Events expire after an hour)
"""  # noqa: E501
    )


def test_a_resolution_failure_is_explained_by_the_event_beside_upstreams_message() -> None:
    message = 'no bundles found for package "kube-green" matching version "0.7.x"'
    why = (
        "catalogs: demo (no version in range, highest 0.6.0); "
        "change spec.source.catalog.version to include an available version"
    )
    stuck = {
        **EXTENSION,
        "status": {"conditions": [condition("Progressing", "True", "Retrying", message)]},
    }
    events = [event(2, "Failed", f"{message}; {why}", kind="Warning")]
    data = explain.status_data(stuck, [], events, diagnose(stuck, [], events))
    assert data["explanation"] == why
    lines = explain.status_text(data, NOW).splitlines()
    assert f"Why:         {why}" in lines
    assert "Next step:   change spec.source.catalog.version to include an available version" in lines
    assert f"  Progressing   True     Retrying   {message}" in lines


def test_ages_like_kubectl() -> None:
    def ago(seconds: int) -> str:
        return (NOW - datetime.timedelta(seconds=seconds)).isoformat()

    assert [explain._age(ago(s), NOW) for s in (5, 125, 7300, 200000)] == ["5s", "2m", "2h", "2d"]
    assert explain._age("not a time", NOW) == "?"


def test_updates_found_and_held_are_shown_with_the_way_to_approve() -> None:
    extension = {
        **EXTENSION,
        "spec": {**EXTENSION["spec"], "upgrade": {"automatic": "Patch"}},
        "status": {
            **EXTENSION["status"],
            "update": {
                "available": {
                    "name": "kube-green.v0.8.0",
                    "version": "0.8.0",
                    "catalog": "c",
                    "path": ["kube-green.v0.7.1", "kube-green.v0.8.0"],
                },
                "held": {"name": "kube-green.v0.8.0", "version": "0.8.0", "heldBy": "OutsidePolicy"},
            },
        },
    }
    data = explain.status_data(extension, REVISIONS, EVENTS, diagnose(extension, REVISIONS))
    assert data["update"]["automatic"] == "Patch"
    lines = explain.status_text(data, NOW).splitlines()
    assert "Updates:     automatic Patch" in lines
    assert "Available:   kube-green.v0.8.0 (0.8.0), path kube-green.v0.7.1 -> kube-green.v0.8.0" in lines
    assert (
        "Held:        kube-green.v0.8.0 (0.8.0): OutsidePolicy; approve with "
        "`olmctl upgrade green --approve 0.8.0`"
    ) in lines


def test_a_rollback_and_a_hold_by_the_operator_say_what_happened_and_what_releases_it() -> None:
    extension = {
        **EXTENSION,
        "spec": {**EXTENSION["spec"], "upgrade": {"readiness": "Respect", "onFailure": "Rollback"}},
        "status": {
            **EXTENSION["status"],
            "update": {
                "held": {"name": "kube-green.v0.8.0", "version": "0.8.0", "heldBy": "Readiness"},
                "rolledBack": {
                    "failed": {"name": "kube-green.v0.7.2", "version": "0.7.2"},
                    "restored": {"name": "kube-green.v0.7.1", "version": "0.7.1"},
                    "reason": "ProgressDeadlineExceeded",
                },
            },
        },
    }
    data = explain.status_data(extension, REVISIONS, EVENTS, diagnose(extension, REVISIONS))
    lines = explain.status_text(data, NOW).splitlines()
    assert (
        "Rolled back: kube-green.v0.7.2 (0.7.2) failed (ProgressDeadlineExceeded); "
        "running kube-green.v0.7.1 (0.7.1)"
    ) in lines
    assert (
        "Held:        kube-green.v0.8.0 (0.8.0): Readiness; the operator's OperatorCondition holds it; "
        "spec.upgrade.readiness Ignore forces it"
    ) in lines
