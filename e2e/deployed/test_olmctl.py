"""`olmctl` against OLM deployed as Pods, as a user at a workstation meets it: catalogd's advertised
URL (`catalogd-service.<ns>.svc`) does not resolve outside the cluster, so every content read goes
through the API server's service proxy to catalogd's Service."""

from __future__ import annotations

from pathlib import Path

import yaml

from e2e.deployed.conftest import DemoExtensions, ServedCatalog
from olm.cli.main import EXIT_OK
from olm_runtime.testing.controlplane import ControlPlane
from olm_runtime.testing.registry import Registry
from olm_testkit.olmctl import Olmctl


def _olmctl(control_plane: ControlPlane) -> Olmctl:
    return Olmctl(control_plane.kubeconfig, control_plane.ca_file)


async def test_catalog_content_is_read_through_the_api_server_proxy(
    control_plane: ControlPlane, demo_catalog: ServedCatalog
) -> None:
    olmctl = _olmctl(control_plane)
    listed = await olmctl("catalog", "list", "-o", "json")
    assert listed.code == EXIT_OK, listed.err
    rows = {row["name"]: row for row in listed.json()}
    assert rows[demo_catalog.name]["serving"] is True
    assert rows[demo_catalog.name]["packages"] == 2

    shown = await olmctl("package", "show", "kube-green", "--catalog", demo_catalog.name, "-o", "json")
    assert shown.code == EXIT_OK, shown.err
    [summary] = shown.json()
    assert summary["package"] == "kube-green"
    assert "0.7.1" in {v for channel in summary["channels"] for v in channel["versions"]}

    found = await olmctl("search", "cat-facts", "--catalog", demo_catalog.name, "-o", "json")
    assert found.code == EXIT_OK, found.err
    assert [s["package"] for s in found.json()] == ["cat-facts-operator"]


async def test_install_preview_and_rbac_of_the_deployed_cluster(
    control_plane: ControlPlane,
    registry: Registry,
    *,
    demo_catalog: ServedCatalog,
    extensions: DemoExtensions,
    namespace: str,
    tmp_path: Path,
) -> None:
    olmctl = _olmctl(control_plane)
    pull = ("--registry-ca", str(registry.ca_file), "--cache-dir", str(tmp_path / "cache"))
    account = await extensions.installer(namespace)
    where = ("--namespace", namespace, "--catalog", demo_catalog.name, "--version", "0.7.1")

    preview = await olmctl("install", "kube-green", *where, "--service-account", account, "--dry-run", *pull)
    assert preview.code == EXIT_OK, preview.err
    assert "Bundle:       kube-green.v0.7.1" in preview.out
    assert "Install mode: AllNamespaces" in preview.out
    assert "sleepinfos.kube-green.com" in preview.out
    assert extensions.created == []  # a dry run creates nothing

    derived = await olmctl("rbac", "kube-green", *where, "--service-account", "kube-green-installer", *pull)
    assert derived.code == EXIT_OK, derived.err
    documents = [d for d in yaml.safe_load_all(derived.out) if d]
    kinds = {d["kind"] for d in documents}
    assert {"ClusterRole", "ClusterRoleBinding"} <= kinds, kinds
    subjects = [s for d in documents if d["kind"].endswith("Binding") for s in d["subjects"]]
    assert subjects
    assert all(
        s == {"kind": "ServiceAccount", "name": "kube-green-installer", "namespace": namespace}
        for s in subjects
    ), subjects
