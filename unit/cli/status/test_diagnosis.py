"""`olmctl status`'s verdict: each way an extension can be stuck, from the conditions
operator-controller writes (messages built by the code that writes them where it is importable)."""

from __future__ import annotations

from typing import Any

import pytest

from olm.api.extensionspec import CatalogSource
from olm.api.revisions import Revision
from olm.cli.status import diagnosis
from olm.cli.status.diagnosis import Diagnosis, Health
from olm.operator_controller.clusterobjectset.rollout import collision_message, probe_message
from olm.pipeline import resolve
from olm.pipeline.catalogs.gathering import NOT_SERVING, Skipped
from olm.pipeline.preflight import permissions
from unit.pipeline.resolve.catalogs import chain, content

SA_MISSING = (
    'service account "installer" not found in namespace "green": unable to authenticate with the '
    "Kubernetes cluster."
)
LINEAR = content(channels={"stable": chain("x", ["1.0.0", "1.1.0", "1.2.0"])})


def extension(
    progressing: tuple[str, str, str] | None,
    *,
    available: tuple[str, str, str] | None = None,
    generation: int = 2,
    observed: int = 2,
    deleting: bool = False,
) -> dict[str, Any]:
    found = []
    for kind, value in (("Progressing", progressing), ("Available", available)):
        if value is not None:
            status, reason, message = value
            found.append(
                {
                    "type": kind,
                    "status": status,
                    "reason": reason,
                    "message": message,
                    "observedGeneration": observed,
                }
            )
    metadata: dict[str, Any] = {"name": "green", "generation": generation, "uid": "u1"}
    if deleting:
        metadata["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {
        "metadata": metadata,
        "spec": {
            "namespace": "green",
            "serviceAccount": {"name": "installer"},
            "source": {"sourceType": "Catalog", "catalog": {"packageName": "kube-green"}},
        },
        "status": {"conditions": found},
    }


def revision(number: int, *, archived: bool = False) -> Revision:
    return Revision.of(
        {
            "metadata": {"name": f"green-{number}"},
            "spec": {"revision": number, "lifecycleState": "Archived" if archived else "Active"},
        }
    )


def resolution_error(
    source: dict[str, Any], installed: str | None = None, **kwargs: Any
) -> resolve.ResolutionError:
    """What operator-controller reports when resolution fails, from the resolver itself."""
    catalogs = kwargs.pop("catalogs", [resolve.CatalogContent(name="demo", content=LINEAR)])
    with pytest.raises(resolve.ResolutionError) as caught:
        resolve.resolve(
            CatalogSource.parse({"packageName": "x", **source}),
            None if installed is None else resolve.Installed(name=f"x.v{installed}", version=installed),
            catalogs,
            **kwargs,
        )
    return caught.value


def failed_event(err: resolve.ResolutionError) -> dict[str, Any]:
    """The Event operator-controller records beside the condition: its message, then ours."""
    return {"type": "Warning", "reason": "Failed", "message": f"{err}; {err.explanation}"}


def resolution_case(
    err: resolve.ResolutionError, owned: list[Revision], advice: resolve.Advice, case: str
) -> Any:
    """A resolution failure: upstream's sentence on the condition, the advice from the Event."""
    return pytest.param(
        extension(("True", "Retrying", str(err))),
        owned,
        [{"reason": "Failed", "message": "an older failure; with its own explanation"}, failed_event(err)],
        Diagnosis(
            health=Health.STUCK,
            waiting_for="a bundle that matches spec.source.catalog",
            next_step=advice,
            explanation=err.explanation,
        ),
        id=case,
    )


OUT_OF_RANGE = resolution_error({"version": "9.0.0"})


PREAUTH = permissions.error_message(
    [
        permissions.Requirement(
            namespace="green", api_group="apps", resource="deployments", resource_name="", verb="create"
        )
    ]
)
MANAGER = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "manager", "namespace": "green"},
}
PROBES_FAILING = probe_message(MANAGER, ['condition "Available" is "False"; expected: "True"'])
FAILING_TEXT = 'Object Deployment.apps/v1 green/manager: condition "Available" is "False"; expected: "True"'


CASES = [
    pytest.param(
        extension(
            ("True", "Succeeded", "Desired state reached"), available=("True", "ProbesSucceeded", "ok")
        ),
        [revision(1)],
        [],
        Diagnosis(health=Health.HEALTHY, waiting_for=""),
        id="healthy",
    ),
    pytest.param(
        extension(None),
        [],
        [],
        Diagnosis(
            health=Health.PROGRESSING,
            waiting_for="operator-controller to reconcile the current spec (generation 2)",
        ),
        id="not-reconciled-yet",
    ),
    pytest.param(
        extension(("True", "Succeeded", "Desired state reached"), generation=3, observed=2),
        [revision(1)],
        [],
        Diagnosis(
            health=Health.PROGRESSING,
            waiting_for="operator-controller to reconcile the current spec (generation 3)",
        ),
        id="spec-changed-since",
    ),
    pytest.param(
        extension(("True", "Succeeded", "Desired state reached"), deleting=True),
        [revision(1)],
        [],
        Diagnosis(health=Health.PROGRESSING, waiting_for="its content to be removed"),
        id="being-deleted",
    ),
    pytest.param(
        extension(
            ("True", "RollingOut", "Revision 1.2.0 is rolling out."),
            available=("False", "ProbeFailure", PROBES_FAILING),
        ),
        [revision(1, archived=True), revision(2)],
        [],
        Diagnosis(
            health=Health.PROGRESSING,
            waiting_for=f"green-2 to roll out: {FAILING_TEXT}",
        ),
        id="rolling-out",
    ),
    pytest.param(
        extension(
            (
                "False",
                "ProgressDeadlineExceeded",
                "Revision has not rolled out for 10 minute(s). Last status: Revision 1.2.0 is rolling out.",
            ),
            available=("False", "ProbeFailure", PROBES_FAILING),
        ),
        [revision(1)],
        [],
        Diagnosis(
            health=Health.STUCK,
            waiting_for=f"green-1, past its progress deadline: {FAILING_TEXT}",
            next_step=diagnosis.PROBES,
        ),
        id="rollout-probe-failing-past-deadline",
    ),
    pytest.param(
        extension(
            ("True", "Succeeded", "Desired state reached"),
            available=("False", "ProbeFailure", PROBES_FAILING),
        ),
        [revision(1)],
        [],
        Diagnosis(
            health=Health.STUCK,
            waiting_for=f"green-1 to pass its probes: {FAILING_TEXT}",
            next_step=diagnosis.PROBES,
        ),
        id="installed-probe-failing",
    ),
    pytest.param(
        extension(("True", "Retrying", SA_MISSING)),
        [],
        [],
        Diagnosis(
            health=Health.STUCK,
            waiting_for='ServiceAccount "installer" in namespace "green"',
            next_step='create ServiceAccount "installer" in namespace "green" with the permissions the '
            "bundle needs (olmctl rbac kube-green --namespace green --service-account installer prints them)",
        ),
        id="missing-service-account",
    ),
    pytest.param(
        extension(
            ("True", "Retrying", f'error for resolved bundle "x.v1.0.0" with version "1.0.0": {PREAUTH}')
        ),
        [],
        [],
        Diagnosis(
            health=Health.STUCK,
            waiting_for="the ServiceAccount's permissions",
            next_step='grant ServiceAccount "installer" in namespace "green" the permissions listed in the '
            "Progressing message (olmctl rbac kube-green --namespace green --service-account installer "
            "prints them all)",
        ),
        id="preflight-missing-rules",
    ),
    resolution_case(OUT_OF_RANGE, [], resolve.Advice.VERSION, "no-bundle-in-range"),
    resolution_case(
        resolution_error({"version": "1.2.0"}, installed="1.0.0"),
        [revision(1)],
        resolve.Advice.SUCCESSOR,
        "not-a-successor",
    ),
    resolution_case(
        resolution_error({}, catalogs=[], not_selected=["demo"]),
        [],
        resolve.Advice.SELECTOR,
        "selector-matches-no-catalog",
    ),
    resolution_case(
        resolution_error({}, catalogs=[], skipped=[Skipped(name="demo", why=NOT_SERVING)]),
        [],
        resolve.Advice.SKIPPED,
        "catalog-not-serving",
    ),
    pytest.param(
        extension(("True", "Retrying", str(OUT_OF_RANGE))),
        [],
        [],
        Diagnosis(
            health=Health.STUCK,
            waiting_for='no bundles found for package "x" matching version "9.0.0"',
            next_step=diagnosis.RETRYING,
        ),
        id="no-bundle-in-range-event-expired",
    ),
    pytest.param(
        extension(
            (
                "True",
                "Retrying",
                'error for resolved bundle "x.v1.1.0" with version "1.1.0": validating upgrade for CRD '
                '"widgets.example.com": existingFieldRemoval: removed field : v1.spec.size',
            )
        ),
        [revision(1)],
        [],
        Diagnosis(
            health=Health.STUCK, waiting_for="a CRD upgrade that is safe", next_step=diagnosis.CRD_UPGRADE
        ),
        id="crd-upgrade-unsafe",
    ),
    pytest.param(
        extension(
            (
                "False",
                "InvalidConfiguration",
                'error for resolved bundle "x.v1.0.0" with version "1.0.0": invalid ClusterExtension '
                'configuration: invalid configuration: required field "watchNamespace" is missing',
            )
        ),
        [],
        [],
        Diagnosis(
            health=Health.STUCK,
            waiting_for="a valid configuration",
            next_step="change spec.config.inline as the Progressing message says (olmctl package show "
            "kube-green lists the install modes the bundle supports)",
        ),
        id="invalid-configuration",
    ),
    pytest.param(
        extension(
            (
                "True",
                "Retrying",
                collision_message("deploy", ["apps/v1 Deployment green/manager: is controlled by x"]),
            )
        ),
        [revision(1)],
        [],
        Diagnosis(
            health=Health.STUCK, waiting_for="objects owned by someone else", next_step=diagnosis.COLLISION
        ),
        id="collision",
    ),
    pytest.param(
        extension(
            (
                "True",
                "Retrying",
                'error for resolved bundle "x.v1.0.0" with version "1.0.0": '
                "pulling bundle image: manifest unknown",
            )
        ),
        [],
        [],
        Diagnosis(health=Health.STUCK, waiting_for="the bundle image", next_step=diagnosis.PULL),
        id="bundle-image-unpullable",
    ),
    pytest.param(
        extension(("False", "Blocked", "something only a spec change fixes")),
        [],
        [],
        Diagnosis(
            health=Health.STUCK, waiting_for="something only a spec change fixes", next_step=diagnosis.BLOCKED
        ),
        id="blocked-otherwise",
    ),
    pytest.param(
        extension(("True", "Retrying", "the API server answered 500")),
        [],
        [],
        Diagnosis(
            health=Health.STUCK, waiting_for="the API server answered 500", next_step=diagnosis.RETRYING
        ),
        id="retrying-otherwise",
    ),
]


@pytest.mark.parametrize(("obj", "owned", "events", "want"), CASES)
def test_diagnose(
    obj: dict[str, Any], owned: list[Revision], events: list[dict[str, Any]], want: Diagnosis
) -> None:
    assert diagnosis.diagnose(obj, owned, events) == want


def test_one_line_joins_list_items_and_cuts() -> None:
    assert diagnosis.one_line('Phase "a" is not ready:\n- one\n- two') == 'Phase "a" is not ready: one two'
    assert diagnosis.one_line("x" * 300, limit=10) == "xxxxxxx..."
