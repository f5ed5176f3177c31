"""Workloads that really run: a ClusterObjectSet's Deployment in a namespace placed on the real
nodes, its image a public name (`busybox:<version>`) that the nodes' containerd pulls from the
local registry as its Docker Hub mirror. On kwok every Pod is Ready whatever its image or probes
say; here the kubelet runs the readiness probe, so removing the file it checks (through the API
server's `pods/exec`, as `kubectl exec` does) turns the revision unavailable, and an image that
does not exist never becomes Ready.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from e2e.deployed.conftest import DeployedOLM, Figures
from olm.api import conditions as api
from olm.api.kinds import CLUSTER_OBJECT_SET
from olm.operator_controller.clusterobjectset import identity
from olm_runtime import conditions
from olm_runtime.client import errors, kinds
from olm_runtime.testing.poll import eventually
from olm_testkit import podexec
from olm_testkit.images import busybox
from olm_testkit.images.registry import Reference, RegistryClient
from olm_testkit.installer import create_cluster_admin_account
from olm_testkit.names import unique
from olm_testkit.node import placement_annotations

READY_FILE = "/tmp/ready"


@pytest.fixture(scope="session")
def busybox_image(pusher: RegistryClient) -> str:
    """`busybox:<version>`, pushed to the session's registry as its nodes' Docker Hub mirror."""
    tag = busybox.version()
    pusher.push(busybox.image(), Reference.parse(f"{pusher.host}/{busybox.REPOSITORY}:{tag}"))
    return f"busybox:{tag}"


@pytest.fixture
async def on_real_nodes(deployed: DeployedOLM, namespace: str) -> str:
    """The test's namespace, its Pods placed on the real nodes, with a ServiceAccount to apply as."""
    await deployed.kube.patch(
        kinds.NAMESPACE, namespace, {"metadata": {"annotations": placement_annotations()}}
    )
    await create_cluster_admin_account(
        deployed.kube, namespace, "installer", binding=f"{namespace}-installer"
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


def workload(name: str, namespace: str, image: str) -> dict[str, Any]:
    """A Deployment whose one container is Ready while `READY_FILE` exists (it creates it)."""
    labels = {"app": name}
    container = {
        "name": "main",
        "image": image,
        "command": ["sh", "-c", f"touch {READY_FILE} && exec sleep 86400"],
        "readinessProbe": {
            "exec": {"command": ["test", "-f", READY_FILE]},
            "periodSeconds": 1,
            "failureThreshold": 1,
        },
        "securityContext": {"allowPrivilegeEscalation": False, "runAsNonRoot": True, "runAsUser": 65532},
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"terminationGracePeriodSeconds": 1, "containers": [container]},
            },
        },
    }


async def create_revision(
    deployed: DeployedOLM, revisions: list[str], namespace: str, deployment: dict[str, Any]
) -> str:
    name = unique("real")
    body = {
        "apiVersion": CLUSTER_OBJECT_SET.api_version,
        "kind": CLUSTER_OBJECT_SET.kind,
        "metadata": {
            "name": name,
            "annotations": {
                identity.SERVICE_ACCOUNT_NAME: "installer",
                identity.SERVICE_ACCOUNT_NAMESPACE: namespace,
            },
        },
        "spec": {
            "revision": 1,
            "lifecycleState": "Active",
            "collisionProtection": "Prevent",
            "phases": [{"name": "deploy", "objects": [{"object": deployment}]}],
        },
    }
    await deployed.kube.create(body)
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


async def test_a_readiness_file_removed_by_exec_turns_the_revision_unavailable_and_back(
    deployed: DeployedOLM,
    busybox_image: str,
    on_real_nodes: str,
    revisions: list[str],
    figures: Figures,
) -> None:
    namespace = on_real_nodes
    started = time.monotonic()
    name = await create_revision(deployed, revisions, namespace, workload("ready", namespace, busybox_image))
    await wait_condition(deployed, name, "Available", "True", api.REASON_PROBES_SUCCEEDED)
    available = time.monotonic() - started
    pod = await pod_of(deployed, namespace, "ready")
    # Really running, on a real node, from the mirror.
    node = deployed.node_of(pod)
    status = pod["status"]["containerStatuses"][0]
    assert status["ready"] is True
    assert status["imageID"].startswith("docker.io/library/busybox@sha256:"), status["imageID"]

    control_plane = deployed.control_plane
    removed = await podexec.run(control_plane, namespace, pod["metadata"]["name"], ["rm", READY_FILE])
    assert removed.exit_code == 0, removed
    cut = time.monotonic()
    unavailable = await wait_condition(deployed, name, "Available", "False", api.REASON_PROBE_FAILURE)
    went_unavailable = time.monotonic() - cut
    absent = await podexec.run(control_plane, namespace, pod["metadata"]["name"], ["test", "-f", READY_FILE])
    assert absent.exit_code == 1, absent

    restored = await podexec.run(control_plane, namespace, pod["metadata"]["name"], ["touch", READY_FILE])
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
    name = await create_revision(deployed, revisions, namespace, workload("missing", namespace, missing))

    async def pull_failed() -> bool:
        with contextlib.suppress(ValueError):
            pod = await pod_of(deployed, namespace, "missing")
            waiting = ((pod["status"].get("containerStatuses") or [{}])[0].get("state") or {}).get(
                "waiting"
            ) or {}
            return waiting.get("reason") in ("ErrImagePull", "ImagePullBackOff")
        return False

    await eventually(pull_failed, what="the kubelet to fail pulling the image", timeout=120)
    # Never available, and the revision says which object it waits for; it keeps rolling out
    # (until its progress deadline, when it has one).
    unavailable = await wait_condition(deployed, name, "Available", "False", api.REASON_PROBE_FAILURE)
    assert "missing" in str(unavailable.get("message", "")), unavailable
    progressing = conditions.of(await deployed.kube.get(CLUSTER_OBJECT_SET, name), "Progressing")
    assert (progressing.get("status"), progressing.get("reason")) == ("True", api.REASON_ROLLING_OUT), (
        progressing
    )
