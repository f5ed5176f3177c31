"""The opt-in component `manifests/shared-drift-watches`, read as data: it grants operator-controller
only list and watch, never on Secrets, and turns on the flag the process reads.

That the grant is enough for shared watches is proven on a real control plane by
`e2e/operator_controller/test_rbac.py`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from olm.operator_controller import main

COMPONENT = Path(__file__).resolve().parents[2] / "manifests" / "shared-drift-watches"


def _documents() -> list[dict[str, Any]]:
    component = yaml.safe_load((COMPONENT / "kustomization.yaml").read_text())
    assert component["kind"] == "Component"
    return [
        d for name in component["resources"] for d in yaml.safe_load_all((COMPONENT / name).read_text()) if d
    ]


def test_it_grants_only_list_and_watch_on_named_kinds_and_never_secrets() -> None:
    (role,) = [d for d in _documents() if d["kind"] == "ClusterRole"]
    for rule in role["rules"]:
        assert rule["verbs"] == ["list", "watch"]
        assert "*" not in rule["apiGroups"]
        assert "*" not in rule["resources"]
        if "" in rule["apiGroups"]:
            assert "secrets" not in rule["resources"]


def test_it_binds_the_role_to_operator_controller_only() -> None:
    (binding,) = [d for d in _documents() if d["kind"] == "ClusterRoleBinding"]
    (role,) = [d for d in _documents() if d["kind"] == "ClusterRole"]
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": role["metadata"]["name"],
    }
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "operator-controller", "namespace": "olmv1-system"}
    ]


def test_its_patch_turns_on_the_flag_the_process_reads() -> None:
    component = yaml.safe_load((COMPONENT / "kustomization.yaml").read_text())
    ((patch,),) = [yaml.safe_load(entry["patch"]) for entry in component["patches"]]
    assert patch["op"] == "add"
    assert patch["path"] == "/spec/template/spec/containers/0/args/-"
    assert main.parser().parse_args([patch["value"]]).shared_drift_watches is True
    assert main.parser().parse_args([]).shared_drift_watches is False
