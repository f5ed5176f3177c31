"""OLM's Pods killed, and rolled to a new image, in the middle of installs and upgrades: another
catalogd replica serves at once, the new operator-controller leader converges, and no revision is
duplicated or left half-created."""

from __future__ import annotations

import signal
import time

from e2e.deployed.conftest import (
    CATALOGD,
    IMAGE_REPOSITORY,
    OPERATOR_CONTROLLER,
    SYSTEM_NAMESPACE,
    DemoExtensions,
    DeployedOLM,
    Figures,
    ServedCatalog,
    assert_no_orphans,
)
from e2e.deployed.test_deployed import content_path
from olm_runtime.client import kinds
from olm_runtime.testing.poll import eventually
from olm_testkit.deploy import install as deploy
from olm_testkit.images.registry import RegistryClient
from olm_testkit.names import unique


async def revision_started(extensions: DemoExtensions, name: str) -> None:
    """Wait until operator-controller has begun writing the extension's revision (its Secrets)."""

    async def started() -> bool:
        revisions, secrets = await extensions.revisions(name)
        return bool(revisions or secrets)

    await eventually(started, what=f"a revision of {name} to be started", timeout=120, interval=0.05)


async def force_delete_pod(deployed: DeployedOLM, pod: str) -> None:
    await deployed.kube.delete(kinds.POD, pod, namespace=SYSTEM_NAMESPACE, grace_period_seconds=0)


async def test_catalogd_leader_pod_killed_during_an_install(
    deployed: DeployedOLM,
    extensions: DemoExtensions,
    demo_catalog: ServedCatalog,
    namespace: str,
    figures: Figures,
) -> None:
    pods = {p["metadata"]["name"] for p in await deployed.pods(CATALOGD)}
    leader = await deployed.leader_pod(CATALOGD)
    assert leader in pods, (leader, pods)
    name = unique("catalogd-failover")
    account = await extensions.installer(namespace)
    await extensions.install(name, "kube-green", namespace, account, version="0.7.1")
    try:
        killed = time.monotonic()
        await force_delete_pod(deployed, leader)

        # The other replica serves every catalog already: content is available right away.
        async def served() -> bool:
            status, _ = deployed.control_plane.rest.raw("GET", content_path(demo_catalog.name, "olm.package"))
            return status == 200

        await eventually(served, what="catalog content from the surviving replica", timeout=30, interval=0.05)
        figures.add("catalogd leader killed -> content served", f"{time.monotonic() - killed:.2f} s")

        async def new_leader() -> bool:
            current = await deployed.leader_pod(CATALOGD)
            return current not in ("", leader)

        await eventually(new_leader, what="another catalogd replica to lead", timeout=120, interval=0.1)
        figures.add(
            "catalogd leader killed -> new leader holds the Lease", f"{time.monotonic() - killed:.1f} s"
        )
        await extensions.wait_installed(name, "0.7.1")
        await deploy.wait_rolled_out(deployed.kube, CATALOGD, timeout=180)
    finally:
        await extensions.delete(name)


async def test_operator_controller_pod_killed_during_an_install(
    deployed: DeployedOLM, extensions: DemoExtensions, namespace: str, figures: Figures
) -> None:
    (pod,) = [p["metadata"]["name"] for p in await deployed.pods(OPERATOR_CONTROLLER)]
    name = unique("oc-pod-failover")
    account = await extensions.installer(namespace)
    await extensions.install(name, "kube-green", namespace, account, version="0.7.1")
    try:
        await revision_started(extensions, name)
        killed = time.monotonic()
        await force_delete_pod(deployed, pod)

        async def new_leader() -> bool:
            current = await deployed.leader_pod(OPERATOR_CONTROLLER)
            return current not in ("", pod)

        await eventually(new_leader, what="a new operator-controller Pod to lead", timeout=180, interval=0.1)
        figures.add("operator-controller Pod killed -> new leader", f"{time.monotonic() - killed:.1f} s")
        await extensions.wait_installed(name, "0.7.1")
        await extensions.wait_active_revisions(name, [f"{name}-1"])
        revisions, secrets = await extensions.revisions(name)
        assert [r["metadata"]["name"] for r in revisions] == [f"{name}-1"]
        assert_no_orphans(revisions, secrets)
    finally:
        await extensions.delete(name)


async def test_operator_controller_sigkilled_inside_its_container_during_an_install(
    deployed: DeployedOLM, extensions: DemoExtensions, namespace: str, figures: Figures
) -> None:
    await deploy.wait_rolled_out(deployed.kube, OPERATOR_CONTROLLER, timeout=180)
    (pod,) = await deployed.pods(OPERATOR_CONTROLLER)
    pod_name = pod["metadata"]["name"]
    restarts = int((await deployed.running_container(pod_name))["restartCount"])
    name = unique("oc-sigkill")
    account = await extensions.installer(namespace)
    await extensions.install(name, "kube-green", namespace, account, version="0.7.1")
    try:
        await revision_started(extensions, name)
        killed = time.monotonic()
        deployed.node_of(pod).kill_container(await deployed.container_id(pod_name), signal.SIGKILL)

        async def restarted() -> bool:
            current = await deployed.kube.get(kinds.POD, pod_name, namespace=SYSTEM_NAMESPACE)
            status = current["status"]["containerStatuses"][0]
            return int(status["restartCount"]) > restarts and bool(status.get("ready"))

        await eventually(restarted, what="the killed container to restart and be Ready", timeout=180)
        figures.add(
            "operator-controller SIGKILLed -> container Ready again", f"{time.monotonic() - killed:.1f} s"
        )
        await extensions.wait_installed(name, "0.7.1")
        revisions, secrets = await extensions.revisions(name)
        assert [r["metadata"]["name"] for r in revisions] == [f"{name}-1"]
        assert_no_orphans(revisions, secrets)
    finally:
        await extensions.delete(name)


async def test_operator_controller_rolled_to_a_new_image_during_an_upgrade(
    deployed: DeployedOLM, extensions: DemoExtensions, namespace: str, pusher: RegistryClient
) -> None:
    name = unique("oc-roll")
    account = await extensions.installer(namespace)
    await extensions.install(name, "kube-green", namespace, account, version="0.7.0")
    next_tag = unique("e2e-next")
    current = deployed.image.partition("@")[2]
    digest = pusher.tag(IMAGE_REPOSITORY, current, next_tag)
    assert digest == current
    new_image = f"{pusher.host}/{IMAGE_REPOSITORY}:{next_tag}"
    try:
        await extensions.wait_installed(name, "0.7.0")
        await extensions.set_version(name, "0.7.1")
        await deploy.set_image(deployed.kube, OPERATOR_CONTROLLER, new_image)
        await deploy.wait_rolled_out(deployed.kube, OPERATOR_CONTROLLER, timeout=180)
        (pod,) = await deployed.pods(OPERATOR_CONTROLLER)
        assert pod["spec"]["containers"][0]["image"] == new_image
        await extensions.wait_installed(name, "0.7.1")
        await extensions.wait_active_revisions(name, [f"{name}-2"])
        assert_no_orphans(*await extensions.revisions(name))
    finally:
        await deploy.set_image(deployed.kube, OPERATOR_CONTROLLER, deployed.image)
        await deploy.wait_rolled_out(deployed.kube, OPERATOR_CONTROLLER, timeout=180)
        await extensions.delete(name)


async def test_a_wrong_image_tag_is_reported_with_the_pull_failure(deployed: DeployedOLM) -> None:
    """What `make run` says when OLM's own image cannot be pulled: the stuck container's reason and
    the Deployment's Events. The old Pod keeps running (maxUnavailable: 0) until it is put back."""
    missing = f"{deployed.image.split('@')[0]}:no-such-tag"
    await deploy.set_image(deployed.kube, OPERATOR_CONTROLLER, missing)
    try:
        failure: deploy.DeploymentFailed | None = None
        try:
            await deploy.wait_rolled_out(deployed.kube, OPERATOR_CONTROLLER, timeout=120)
        except deploy.DeploymentFailed as error:
            failure = error
        assert failure is not None, "a rollout to a missing tag must fail"
        message = str(failure)
        assert "ErrImagePull" in message or "ImagePullBackOff" in message, message
        assert "no-such-tag" in message, message
        assert "not found" in message, message
        running = [
            p for p in await deployed.pods(OPERATOR_CONTROLLER) if p["status"].get("phase") == "Running"
        ]
        assert running, "the old Pod must keep running while the new one cannot pull"
    finally:
        await deploy.set_image(deployed.kube, OPERATOR_CONTROLLER, deployed.image)
        await deploy.wait_rolled_out(deployed.kube, OPERATOR_CONTROLLER, timeout=180)
