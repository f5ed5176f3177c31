"""What a rollout that cannot finish reports: the stuck containers and the Deployment's Events."""

from __future__ import annotations

from typing import Any

import pytest

from olm_testkit.deploy import install


def deployment(*, generation: int = 2, **status: int) -> dict[str, Any]:
    return {"metadata": {"generation": generation}, "spec": {"replicas": 2}, "status": status}


@pytest.mark.parametrize(
    ("status", "done"),
    [
        pytest.param(
            {"observedGeneration": 2, "updatedReplicas": 2, "availableReplicas": 2, "replicas": 2},
            True,
            id="done",
        ),
        pytest.param(
            {"observedGeneration": 1, "updatedReplicas": 2, "availableReplicas": 2, "replicas": 2},
            False,
            id="not-observed",
        ),
        pytest.param(
            {"observedGeneration": 2, "updatedReplicas": 1, "availableReplicas": 2, "replicas": 3},
            False,
            id="old-pod-left",
        ),
        pytest.param(
            {"observedGeneration": 2, "updatedReplicas": 2, "availableReplicas": 1, "replicas": 2},
            False,
            id="not-available",
        ),
    ],
)
def test_rolled_out(status: dict[str, int], done: bool) -> None:
    assert install.rolled_out(deployment(**status)) is done


def pod(name: str, reason: str | None, message: str = "") -> dict[str, Any]:
    state = {"waiting": {"reason": reason, "message": message}} if reason else {"running": {}}
    return {
        "metadata": {"name": name},
        "status": {"containerStatuses": [{"name": "manager", "state": state}]},
    }


def test_stuck_containers_are_named_with_reason_and_message() -> None:
    pods = [
        pod("a", "ImagePullBackOff", 'Back-off pulling image "x:no-such-tag"'),
        pod("b", "ContainerCreating"),
        pod("c", None),
        pod("d", "CrashLoopBackOff", "back-off 10s restarting failed container"),
    ]
    assert install.pod_problems(pods) == {
        "pod a container manager": 'ImagePullBackOff: Back-off pulling image "x:no-such-tag"',
        "pod d container manager": "CrashLoopBackOff: back-off 10s restarting failed container",
    }


def test_report_names_the_deployment_problems_and_events() -> None:
    text = install.rollout_report(
        "operator-controller-controller-manager",
        ["pod a container manager: ErrImagePull: not found"],
        ["Warning Failed Pod/a: Failed to pull image"],
        timed_out=False,
    )
    assert text.splitlines() == [
        "Deployment olmv1-system/operator-controller-controller-manager did not roll out",
        "  pod a container manager: ErrImagePull: not found",
        "  events:",
        "    Warning Failed Pod/a: Failed to pull image",
    ]
