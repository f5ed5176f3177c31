"""Workloads that really run: a ClusterObjectSet's Deployment in a namespace placed on the real
nodes, its image a public name (`busybox:<version>`) that the nodes' containerd pulls from the
local registry as its Docker Hub mirror. On kwok every Pod is Ready whatever its image or probes
say; here the kubelet runs the readiness probe, so removing the file it checks (through the API
server's `pods/exec`, as `kubectl exec` does) turns the revision unavailable, an image that does
not exist never becomes Ready, and a rollout that never becomes Ready is stopped at its progress
deadline: the real ten minutes, which pass while the session's other tests run.
"""

from __future__ import annotations

import contextlib
import datetime
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from e2e.deployed import workloads
from e2e.deployed.conftest import DeployedOLM, Figures, StuckRollout
from olm.api import conditions as api
from olm.api.kinds import CLUSTER_OBJECT_SET
from olm_runtime import conditions
from olm_runtime.client import errors, kinds
from olm_runtime.testing.poll import eventually
from olm_testkit import podexec
from olm_testkit.installer import create_cluster_admin_account
from olm_testkit.names import unique
from olm_testkit.node import placement_annotations


@pytest.fixture
async def on_real_nodes(deployed: DeployedOLM, namespace: str) -> str:
    """The test's namespace, its Pods placed on the real nodes, with a ServiceAccount to apply as."""
    await deployed.kube.patch(
        kinds.NAMESPACE, namespace, {"metadata": {"annotations": placement_annotations()}}
    )
    await create_cluster_admin_account(
        deployed.kube, namespace, workloads.INSTALLER, binding=f"{namespace}-installer"
    )
    return namespace


@pytest.fixture
async def revisions(deployed: DeployedOLM) -> AsyncIterator[list[str]]:
    """Names of the ClusterObjectSets a test created, deleted after it."""
    created: list[str] = []
    yield created
    for name in created:
        with contextlib.suppress(errors.NotFound):
            await deployed.kube.delete(CLUSTER_OBJECT_SET, name)


async def create_revision(
    deployed: DeployedOLM, revisions: list[str], namespace: str, deployment: dict[str, Any]
) -> str:
    name = unique("real")
    await deployed.kube.create(workloads.revision(name, namespace, deployment))
    revisions.append(name)
    return name


async def wait_condition(
    deployed: DeployedOLM, name: str, kind: str, status: str, reason: str, *, timeout: float = 120
) -> dict[str, Any]:
    found: dict[str, Any] = {}

    async def matches() -> bool:
        nonlocal found
        found = conditions.of(await deployed.kube.get(CLUSTER_OBJECT_SET, name), kind)
        return found.get("status") == status and found.get("reason") == reason

    try:
        await eventually(matches, what=f"{name} {kind}={status}/{reason}", timeout=timeout)
    except AssertionError as error:
        raise AssertionError(f"{error}; last: {found}") from None
    return found


async def pod_of(deployed: DeployedOLM, namespace: str, app: str) -> dict[str, Any]:
    listed = await deployed.kube.list(kinds.POD, namespace=namespace, label_selector=f"app={app}")
    (pod,) = [p for p in listed.items if not p["metadata"].get("deletionTimestamp")]
    return dict(pod)


async def pull_failing(deployed: DeployedOLM, namespace: str, app: str) -> dict[str, Any]:
    """The app's Pod, once the kubelet has failed to pull its image."""
    found: dict[str, Any] = {}

    async def pull_failed() -> bool:
        nonlocal found
        with contextlib.suppress(ValueError):  # no Pod yet, or one replacing another
            found = await pod_of(deployed, namespace, app)
            statuses = found["status"].get("containerStatuses") or [{}]
            waiting = (statuses[0].get("state") or {}).get("waiting") or {}
            return waiting.get("reason") in ("ErrImagePull", "ImagePullBackOff")
        return False

    await eventually(pull_failed, what=f"the kubelet to fail pulling {app}'s image", timeout=120)
    return found


async def test_a_readiness_file_removed_by_exec_turns_the_revision_unavailable_and_back(
    deployed: DeployedOLM,
    busybox_image: str,
    on_real_nodes: str,
    revisions: list[str],
    figures: Figures,
) -> None:
    namespace = on_real_nodes
    started = time.monotonic()
    name = await create_revision(
        deployed, revisions, namespace, workloads.deployment("ready", namespace, busybox_image)
    )
    await wait_condition(deployed, name, "Available", "True", api.REASON_PROBES_SUCCEEDED)
    available = time.monotonic() - started
    pod = await pod_of(deployed, namespace, "ready")
    # Really running, on a real node, from the mirror.
    node = deployed.node_of(pod)
    status = pod["status"]["containerStatuses"][0]
    assert status["ready"] is True
    assert status["imageID"].startswith("docker.io/library/busybox@sha256:"), status["imageID"]

    control_plane = deployed.control_plane
    removed = await podexec.run(
        control_plane, namespace, pod["metadata"]["name"], ["rm", workloads.READY_FILE]
    )
    assert removed.exit_code == 0, removed
    cut = time.monotonic()
    unavailable = await wait_condition(deployed, name, "Available", "False", api.REASON_PROBE_FAILURE)
    went_unavailable = time.monotonic() - cut
    absent = await podexec.run(
        control_plane, namespace, pod["metadata"]["name"], ["test", "-f", workloads.READY_FILE]
    )
    assert absent.exit_code == 1, absent

    restored = await podexec.run(
        control_plane, namespace, pod["metadata"]["name"], ["touch", workloads.READY_FILE]
    )
    assert restored.exit_code == 0, restored
    back = time.monotonic()
    await wait_condition(deployed, name, "Available", "True", api.REASON_PROBES_SUCCEEDED)
    came_back = time.monotonic() - back
    # The same Pod throughout: nothing was restarted or replaced to get there.
    again = await pod_of(deployed, namespace, "ready")
    assert again["metadata"]["uid"] == pod["metadata"]["uid"]
    assert again["status"]["containerStatuses"][0]["restartCount"] == 0

    figures.add(
        "real workload: created -> Available (pull, start, probe)", f"{available:.1f} s on {node.name}"
    )
    figures.add("real workload: ready file removed -> Available False", f"{went_unavailable:.1f} s")
    figures.add("real workload: ready file back -> Available True", f"{came_back:.1f} s")
    figures.add("real workload: unavailable because", str(unavailable.get("message", ""))[:90])


async def test_an_image_that_does_not_exist_is_never_ready_and_says_why(
    deployed: DeployedOLM,
    busybox_image: str,
    on_real_nodes: str,
    revisions: list[str],
) -> None:
    namespace = on_real_nodes
    missing = busybox_image.rpartition(":")[0] + ":no-such-tag"
    name = await create_revision(
        deployed, revisions, namespace, workloads.deployment("missing", namespace, missing)
    )
    await pull_failing(deployed, namespace, "missing")
    # Never available, and the revision says which object it waits for; it keeps rolling out
    # (until its progress deadline, when it has one).
    unavailable = await wait_condition(deployed, name, "Available", "False", api.REASON_PROBE_FAILURE)
    assert "missing" in str(unavailable.get("message", "")), unavailable
    progressing = conditions.of(await deployed.kube.get(CLUSTER_OBJECT_SET, name), "Progressing")
    assert (progressing.get("status"), progressing.get("reason")) == ("True", api.REASON_ROLLING_OUT), (
        progressing
    )


DEADLINE_LATENESS = 60.0
"""Seconds after its due time the deadline may fire: the reconcile is queued for the due time, and
a second of it is lost to the timestamps' whole seconds."""


async def test_a_rollout_that_never_becomes_ready_is_stopped_at_its_progress_deadline(
    deployed: DeployedOLM, stuck_rollout: StuckRollout, figures: Figures
) -> None:
    """The shortest deadline the API allows, ten minutes from the revision's creation (the session
    created it as it started): rolling out until then, `ProgressDeadlineExceeded` after, and its
    Pod on a real node still failing to pull the image that does not exist."""
    now = datetime.datetime.now(datetime.UTC)
    remaining = (stuck_rollout.due - now).total_seconds()
    if remaining > 0:
        progressing = conditions.of(
            await deployed.kube.get(CLUSTER_OBJECT_SET, stuck_rollout.name), "Progressing"
        )
        assert (progressing.get("status"), progressing.get("reason")) == ("True", api.REASON_ROLLING_OUT), (
            progressing
        )
    exceeded = await wait_condition(
        deployed,
        stuck_rollout.name,
        "Progressing",
        "False",
        api.REASON_PROGRESS_DEADLINE_EXCEEDED,
        timeout=max(remaining, 0) + DEADLINE_LATENESS,
    )
    fired = datetime.datetime.fromisoformat(str(exceeded["lastTransitionTime"]).replace("Z", "+00:00"))
    late = (fired - stuck_rollout.due).total_seconds()
    # Not before the deadline (timestamps are whole seconds), and not long after it.
    assert -1 <= late <= DEADLINE_LATENESS, (stuck_rollout.due, exceeded)
    available = conditions.of(await deployed.kube.get(CLUSTER_OBJECT_SET, stuck_rollout.name), "Available")
    assert available.get("status") == "False", available
    node = deployed.node_of(await pull_failing(deployed, stuck_rollout.namespace, "stuck"))

    figures.add(
        "progress deadline (10 min): created -> ProgressDeadlineExceeded",
        f"{(fired - stuck_rollout.created).total_seconds():.0f} s ({late:+.0f} s), Pod on {node.name}",
    )
    figures.add("progress deadline: left to wait when its test began", f"{max(remaining, 0):.0f} s")
    figures.add("progress deadline: message", str(exceeded.get("message", ""))[:90])
