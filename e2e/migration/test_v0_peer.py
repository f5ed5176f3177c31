"""OLM v0 as the migration tests' peer: real operators installed through the real v0 operators, in
each install mode, reach what a v0 user sees (CSV Succeeded, Deployments Available, the
OperatorGroup's target namespaces on the CSV), with the bundles' manifests inline in the catalog so
that no unpack Job is needed."""

from __future__ import annotations

from typing import Any

from olm_runtime.client import Client, errors, kinds
from olm_testkit import olmv0
from olm_testkit.olmv0 import kinds as v0kinds

from .conftest import V0Installs


async def csv_of(kube: Client, installation: olmv0.Installation) -> dict[str, Any]:
    return await kube.get(v0kinds.CLUSTER_SERVICE_VERSION, installation.csv, namespace=installation.namespace)


def target_namespaces_annotation(obj: dict[str, Any]) -> str | None:
    return (obj["metadata"].get("annotations") or {}).get(v0kinds.TARGET_NAMESPACES_ANNOTATION)


async def deployments(kube: Client, csv: dict[str, Any]) -> list[dict[str, Any]]:
    names = [d["name"] for d in csv["spec"]["install"]["spec"]["deployments"]]
    namespace = csv["metadata"]["namespace"]
    return [await kube.get(kinds.DEPLOYMENT, name, namespace=namespace) for name in names]


def available(deployment: dict[str, Any]) -> bool:
    found = [c for c in deployment["status"].get("conditions", []) if c["type"] == "Available"]
    return bool(found) and found[0]["status"] == "True"


async def install_plan(kube: Client, installation: olmv0.Installation) -> dict[str, Any]:
    return await kube.get(v0kinds.INSTALL_PLAN, installation.install_plan, namespace=installation.namespace)


async def test_all_namespaces_install_succeeds_without_copying_the_csv(
    kube: Client, v0_installs: V0Installs
) -> None:
    installation = await v0_installs.install("kube-green", "alpha", mode=olmv0.InstallMode.ALL_NAMESPACES)

    csv = await csv_of(kube, installation)
    assert installation.csv == "kube-green.v0.7.1"  # the channel's head
    assert csv["status"]["phase"] == "Succeeded"
    assert target_namespaces_annotation(csv) == ""
    found = await deployments(kube, csv)
    assert [d["metadata"]["name"] for d in found] == ["kube-green-controller-manager"]
    assert all(available(d) for d in found)
    assert all(target_namespaces_annotation(d["spec"]["template"]) == "" for d in found)
    # The manifests came inline from the catalog: v0 looked up no bundle image (no unpack Job).
    assert not (await install_plan(kube, installation))["status"].get("bundleLookups")
    assert installation.crds == ("sleepinfos.kube-green.com",)
    # OLMConfig `cluster` disables copied CSVs: no copy in a namespace the OperatorGroup targets.
    try:
        await kube.get(v0kinds.CLUSTER_SERVICE_VERSION, installation.csv, namespace="default")
    except errors.NotFound:
        pass
    else:
        raise AssertionError(f"{installation.csv} was copied into default")


async def test_own_namespace_install_watches_its_namespace(kube: Client, v0_installs: V0Installs) -> None:
    installation = await v0_installs.install(
        "cat-facts-operator", "alpha", mode=olmv0.InstallMode.OWN_NAMESPACE
    )

    csv = await csv_of(kube, installation)
    assert installation.csv == "cat-facts-operator.v1.1.2"
    assert installation.target_namespaces == (installation.namespace,)
    assert csv["status"]["phase"] == "Succeeded"
    assert target_namespaces_annotation(csv) == installation.namespace
    found = await deployments(kube, csv)
    assert found
    assert all(available(d) for d in found)
    assert all(target_namespaces_annotation(d["spec"]["template"]) == installation.namespace for d in found)


async def test_single_namespace_manual_install_waits_for_approval_of_the_upgrade(
    kube: Client, v0_installs: V0Installs
) -> None:
    installation = await v0_installs.install(
        "etcd",
        "singlenamespace-alpha",
        mode=olmv0.InstallMode.SINGLE_NAMESPACE,
        approval=olmv0.Approval.MANUAL,
        starting_csv="etcdoperator.v0.9.2",
    )

    (watched,) = installation.target_namespaces
    assert watched != installation.namespace
    csv = await csv_of(kube, installation)
    assert installation.csv == "etcdoperator.v0.9.2"
    assert csv["status"]["phase"] == "Succeeded"
    assert target_namespaces_annotation(csv) == watched
    found = await deployments(kube, csv)
    assert found
    assert all(available(d) for d in found)
    assert (await install_plan(kube, installation))["spec"]["approved"] is True

    # v0 proposes the channel's next bundle in an InstallPlan of its own, which the Subscription
    # names, and installs nothing until someone approves it.
    proposed = await olmv0.proposed_upgrade(kube, installation)
    assert proposed.plan["spec"]["clusterServiceVersionNames"] == ["etcdoperator.v0.9.4"]
    assert proposed.plan["spec"]["approved"] is False
    assert proposed.subscription["status"]["installedCSV"] == "etcdoperator.v0.9.2"
    assert proposed.subscription["status"]["currentCSV"] == "etcdoperator.v0.9.4"
    csvs = await kube.list(v0kinds.CLUSTER_SERVICE_VERSION, namespace=installation.namespace)
    assert [(c["metadata"]["name"], c["status"]["phase"]) for c in csvs.items] == [
        ("etcdoperator.v0.9.2", "Succeeded")
    ]
