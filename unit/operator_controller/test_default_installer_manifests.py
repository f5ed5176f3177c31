"""The opt-in component `manifests/default-installer`, read as data: one ServiceAccount of its own
(never operator-controller's), bound to cluster-admin, and the flag that names it.

That operator-controller then installs an extension without `spec.serviceAccount` as that account
is proven on a real control plane by `e2e/compat/test_serviceaccount_less.py`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from olm.operator_controller import clusterextension, main

COMPONENT = Path(__file__).resolve().parents[2] / "manifests" / "default-installer"


def _component() -> dict[str, Any]:
    component = yaml.safe_load((COMPONENT / "kustomization.yaml").read_text())
    assert component["kind"] == "Component"
    return dict(component)


def _documents() -> list[dict[str, Any]]:
    return [
        d
        for name in _component()["resources"]
        for d in yaml.safe_load_all((COMPONENT / name).read_text())
        if d
    ]


def test_it_binds_an_account_of_its_own_to_cluster_admin() -> None:
    (account,) = [d for d in _documents() if d["kind"] == "ServiceAccount"]
    (binding,) = [d for d in _documents() if d["kind"] == "ClusterRoleBinding"]
    assert account["metadata"]["name"] != "operator-controller"
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": "cluster-admin",
    }
    assert binding["subjects"] == [
        {
            "kind": "ServiceAccount",
            "name": account["metadata"]["name"],
            "namespace": account["metadata"]["namespace"],
        }
    ]
    assert {d["kind"] for d in _documents()} == {"ServiceAccount", "ClusterRoleBinding"}


def test_its_patch_names_that_account_with_the_flag_the_process_reads() -> None:
    ((patch,),) = [yaml.safe_load(entry["patch"]) for entry in _component()["patches"]]
    (account,) = [d for d in _documents() if d["kind"] == "ServiceAccount"]
    assert patch["op"] == "add"
    assert patch["path"] == "/spec/template/spec/containers/0/args/-"
    args = main.parser().parse_args([patch["value"]])
    assert args.default_service_account == clusterextension.Installer(
        account["metadata"]["namespace"], account["metadata"]["name"]
    )
    assert main.parser().parse_args([]).default_service_account is None
