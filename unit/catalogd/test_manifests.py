"""catalogd's hand-written Service and Certificate, read as data: what clients that reach a catalogd
Pod by port-forward (upstream's `kubectl operator olmv1 search`) rely on, as upstream ships it.

That such a client works end to end is proven by `e2e/deployed/test_kubectl_operator.py`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

CATALOGD = Path(__file__).resolve().parents[2] / "manifests" / "catalogd"


def _of_kind(kind: str) -> list[dict[str, Any]]:
    listed = yaml.safe_load((CATALOGD / "kustomization.yaml").read_text())["resources"]
    documents = [d for name in listed for d in yaml.safe_load_all((CATALOGD / name).read_text()) if d]
    return [d for d in documents if d["kind"] == kind]


def test_every_service_port_targets_the_container_port_of_its_name_by_number() -> None:
    (deployment,) = _of_kind("Deployment")
    (container,) = [c for c in deployment["spec"]["template"]["spec"]["containers"] if c["name"] == "manager"]
    container_ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    (service,) = _of_kind("Service")
    targets = {p["name"]: p["targetPort"] for p in service["spec"]["ports"]}
    assert targets == {name: container_ports[name] for name in ("https", "webhook", "metrics")}


def test_the_serving_certificate_names_the_service_and_localhost() -> None:
    (service,) = _of_kind("Service")
    certificates = {c["spec"]["secretName"]: c for c in _of_kind("Certificate")}
    serving = certificates["catalogd-service-cert"]
    service_name = f"{service['metadata']['name']}.{service['metadata']['namespace']}.svc"
    assert serving["spec"]["dnsNames"] == [service_name, f"{service_name}.cluster.local", "localhost"]
