"""Install OLM into a cluster from `manifests/` and wait until both Deployments have rolled out.

What users run is `kubectl apply -f manifests/crds/ && kubectl apply -k manifests/catalogd && kubectl
apply -k manifests/operator-controller` with an overlay that sets the image; this applies the same
objects (`kustomize.build`) with server-side apply. Two things are cluster configuration, not
manifests, and are done beside them: the optional ConfigMaps of extra registry CAs, and, on the
local cluster, the annotations that place the `olmv1-system` Pods on the real node.

A rollout that cannot finish fails with what the Pods say (an image that cannot be pulled, a
container that keeps crashing) and the Deployment's Events, instead of a bare timeout.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from olm.api import names
from olm_runtime.client import Client, PatchType, errors, kinds
from olm_testkit import certmanager
from olm_testkit.deploy import kustomize

NAMESPACE = names.DEFAULT_SYSTEM_NAMESPACE
DEPLOYMENTS = ("catalogd-controller-manager", "operator-controller-controller-manager")
TRUSTED_CA_CONFIGMAPS = ("catalogd-trusted-registry-cas", "operator-controller-trusted-registry-cas")
REVISION_ANNOTATION = "deployment.kubernetes.io/revision"
CATALOGD_WEBHOOK = "catalogd-mutating-webhook-configuration"
CATALOGD_SERVICE = "catalogd-service"
STUCK_SECONDS = 20.0
"""How long a container must stay in a stuck state before the rollout is reported as failed: a
first ErrImagePull or crash can pass on a loaded machine while the kubelet retries."""
FIELD_MANAGER = "olm-py-deploy"
# Waiting reasons after which a container will not start without someone changing something.
STUCK_REASONS = frozenset(
    {"ErrImagePull", "ImagePullBackOff", "InvalidImageName", "CrashLoopBackOff", "CreateContainerConfigError"}
)


class DeploymentFailed(RuntimeError):
    """A Deployment did not roll out; the message says what its Pods and Events report."""


@dataclass(frozen=True, kw_only=True)
class Deployed:
    image: str
    seconds: dict[str, float]
    """Seconds from apply until each Deployment had rolled out."""


def olm_objects(image: str) -> list[dict[str, Any]]:
    """Every object of both kustomizations, the image set to `image`."""
    override = kustomize.ImageOverride(name=kustomize.shipped_image(), new_ref=image)
    return [obj for d in kustomize.OLM_KUSTOMIZATIONS for obj in kustomize.build(d, [override])]


async def install(
    client: Client,
    *,
    image: str,
    objects: Sequence[Mapping[str, Any]] | None = None,
    registry_cas: Sequence[bytes] = (),
    namespace_annotations: Mapping[str, str] | None = None,
    timeout: float = 300.0,
) -> Deployed:
    """Apply OLM with `image` (the objects of manifests/, or `objects`, a release's install.yaml,
    which names it) and wait until both Deployments have rolled out."""
    await require_cert_manager(client)
    namespace: dict[str, Any] = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
    if namespace_annotations:
        namespace["metadata"]["annotations"] = dict(namespace_annotations)
    # The placement annotations must be in place before the first Pod is created.
    await client.apply(namespace, field_manager=f"{FIELD_MANAGER}-placement", force=True)
    if registry_cas:
        data = {f"ca-{index}.crt": ca.decode() for index, ca in enumerate(registry_cas)}
        for name in TRUSTED_CA_CONFIGMAPS:
            configmap = {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": name, "namespace": NAMESPACE},
                "data": data,
            }
            await client.apply(configmap, field_manager=FIELD_MANAGER, force=True)
    started = time.monotonic()
    for obj in olm_objects(image) if objects is None else objects:
        await client.apply(obj, field_manager=FIELD_MANAGER, force=True)
    seconds = {}
    for name in DEPLOYMENTS:
        await wait_rolled_out(client, name, timeout=timeout - (time.monotonic() - started))
        seconds[name] = time.monotonic() - started
    await wait_webhook_ready(client, timeout=max(timeout - (time.monotonic() - started), 30.0))
    return Deployed(image=image, seconds=seconds)


async def wait_webhook_ready(client: Client, *, timeout: float) -> None:
    """Return once the label webhook can be called: cert-manager has injected its CA bundle and
    catalogd's Service has a ready endpoint (its failurePolicy is Fail, so until then every
    ClusterCatalog create or update is refused)."""
    deadline = time.monotonic() + timeout
    missing = "the CA bundle"
    while time.monotonic() < deadline:
        configuration = await client.get(kinds.MUTATING_WEBHOOK_CONFIGURATION, CATALOGD_WEBHOOK)
        if all((w.get("clientConfig") or {}).get("caBundle") for w in configuration.get("webhooks") or ()):
            missing = "a ready endpoint of catalogd-service"
            selector = f"kubernetes.io/service-name={CATALOGD_SERVICE}"
            listed = await client.list(kinds.ENDPOINT_SLICE, namespace=NAMESPACE, label_selector=selector)
            slices = listed.items
            endpoints = [e for s in slices for e in s.get("endpoints") or ()]
            if any((e.get("conditions") or {}).get("ready") for e in endpoints):
                return
        await asyncio.sleep(0.5)
    raise DeploymentFailed(
        f"catalogd's label webhook has no {missing} after {timeout:.0f}s "
        "(is cert-manager's cainjector running?)"
    )


async def require_cert_manager(client: Client) -> None:
    """Fail before applying anything when cert-manager's kinds are not served: catalogd's
    certificates are cert-manager objects, and half of OLM applied helps nobody."""
    try:
        await client.list(certmanager.CERTIFICATE, namespace=NAMESPACE)
    except (errors.APIError, LookupError):
        raise DeploymentFailed(
            "cert-manager is not installed (the cluster does not serve cert-manager.io/v1 Certificates): "
            "install cert-manager first, then apply OLM again (docs/install.md)"
        ) from None


async def set_image(client: Client, deployment: str, image: str) -> None:
    """Roll one Deployment to another image (its only container)."""
    current = await client.get(kinds.DEPLOYMENT, deployment, namespace=NAMESPACE)
    containers = current["spec"]["template"]["spec"]["containers"]
    patch = {
        "spec": {
            "template": {"spec": {"containers": [{"name": c["name"], "image": image} for c in containers]}}
        }
    }
    await client.patch(
        kinds.DEPLOYMENT, deployment, patch, namespace=NAMESPACE, patch_type=PatchType.STRATEGIC
    )


async def wait_rolled_out(client: Client, name: str, *, timeout: float) -> None:
    """Return once the Deployment's new ReplicaSet is fully available and no old Pod is left."""
    deadline = time.monotonic() + max(timeout, 1.0)
    stuck_since: dict[str, float] = {}
    while True:
        deployment = await client.get(kinds.DEPLOYMENT, name, namespace=NAMESPACE)
        if rolled_out(deployment):
            return
        # Until the controller has seen the latest spec, the revision annotation (and with it which
        # Pods are current) still describes the previous one, e.g. the bad tag being rolled back.
        observed = _observed(deployment)
        pods = await _current_pods(client, deployment) if observed else []
        problems = pod_problems(pods)
        now = time.monotonic()
        stuck_since = {where: stuck_since.get(where, now) for where in problems}
        lasting = [f"{w}: {problems[w]}" for w, since in stuck_since.items() if now - since >= STUCK_SECONDS]
        if lasting or now > deadline:
            events = await _events(client, name, pods)
            current = lasting or [f"{w}: {text}" for w, text in problems.items()]
            raise DeploymentFailed(rollout_report(name, current, events, timed_out=not lasting))
        await asyncio.sleep(0.5)


def _observed(deployment: Mapping[str, Any]) -> bool:
    status = deployment.get("status") or {}
    return bool(status.get("observedGeneration", 0) >= deployment["metadata"].get("generation", 0))


def rolled_out(deployment: Mapping[str, Any]) -> bool:
    spec, status = deployment.get("spec") or {}, deployment.get("status") or {}
    wanted = spec.get("replicas", 1)
    return (
        _observed(deployment)
        and status.get("updatedReplicas", 0) == wanted
        and status.get("availableReplicas", 0) == wanted
        and status.get("replicas", 0) == wanted
    )


def pod_problems(pods: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """`pod P container C` -> `Reason: message` for every container in a state it will not leave
    by itself (ErrImagePull and ImagePullBackOff alternate while the kubelet retries: one entry)."""
    problems = {}
    for pod in pods:
        for status in (pod.get("status") or {}).get("containerStatuses") or ():
            waiting = (status.get("state") or {}).get("waiting") or {}
            if waiting.get("reason") in STUCK_REASONS:
                where = f"pod {pod['metadata']['name']} container {status['name']}"
                problems[where] = f"{waiting['reason']}: {waiting.get('message', '').strip()}"
    return problems


def rollout_report(name: str, problems: Sequence[str], events: Sequence[str], *, timed_out: bool) -> str:
    head = f"Deployment {NAMESPACE}/{name} did not roll out" + (" in time" if timed_out else "")
    lines = [head, *(f"  {p}" for p in problems)]
    if events:
        lines += ["  events:", *(f"    {e}" for e in events[-15:])]
    return "\n".join(lines)


async def _current_pods(client: Client, deployment: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The Pods of the Deployment's newest ReplicaSet: a Pod of an earlier revision that could not
    pull its image says nothing about the rollout under way (e.g. rolling back from a bad tag)."""
    selector = ",".join(f"{k}={v}" for k, v in deployment["spec"]["selector"]["matchLabels"].items())
    revision = (deployment["metadata"].get("annotations") or {}).get(REVISION_ANNOTATION)
    replica_sets = (await client.list(kinds.REPLICA_SET, namespace=NAMESPACE, label_selector=selector)).items
    hashes = {
        rs["metadata"]["labels"].get("pod-template-hash")
        for rs in replica_sets
        if (rs["metadata"].get("annotations") or {}).get(REVISION_ANNOTATION) == revision
    }
    pods = (await client.list(kinds.POD, namespace=NAMESPACE, label_selector=selector)).items
    return [pod for pod in pods if pod["metadata"].get("labels", {}).get("pod-template-hash") in hashes]


async def _events(client: Client, deployment: str, pods: Sequence[Mapping[str, Any]]) -> list[str]:
    involved = {deployment, *(pod["metadata"]["name"] for pod in pods)}
    try:
        events = (await client.list(kinds.EVENT, namespace=NAMESPACE)).items
    except errors.APIError:
        return []
    chosen = [e for e in events if (e.get("involvedObject") or {}).get("name") in involved]
    chosen.sort(key=lambda e: e.get("lastTimestamp") or e.get("eventTime") or "")
    lines = []
    for event in chosen:
        about = event["involvedObject"]
        message = (event.get("message") or "").strip()
        lines.append(
            f"{event.get('type')} {event.get('reason')} {about.get('kind')}/{about.get('name')}: {message}"
        )
    return lines
