"""What the real node is configured with: the settings this VM needs, Pods kept on the machine, and
a sandbox image containerd can import."""

from __future__ import annotations

import hashlib
import io
import json
import os
import tarfile
import tomllib
from pathlib import Path

import pytest

from olm_runtime.testing import node, nodenet
from olm_runtime.testing.pki import CertificateAuthority


@pytest.fixture
def real_node(tmp_path: Path) -> node.RealNode:
    ca = CertificateAuthority.load_or_create(tmp_path / "pki")
    return node.RealNode(
        node.NodeOptions(
            binary_dir=tmp_path / "bin",
            state_dir=tmp_path / "node",
            network=nodenet.NodeNetwork(index=3),
            owner=tmp_path,
            kubeconfig=tmp_path / "kubeconfig",
            server="https://10.87.3.1:6443",
            ca=ca,
        )
    )


def test_addresses_of_a_node_index() -> None:
    network = nodenet.NodeNetwork(index=3)
    assert (network.host_ip, network.node_ip, network.pod_cidr) == ("10.87.3.1", "10.87.3.2", "10.88.3.0/24")
    assert network.enter(["ip", "addr"]) == ["nsenter", "--net=/run/netns/olm-node-3", "--", "ip", "addr"]


def test_pod_traffic_is_forwarded_only_to_pods_and_the_host() -> None:
    rules = nodenet.NodeNetwork(index=3).forward_rules().splitlines()
    assert rules[-2:] == ["-A OLMPY-FORWARD -j DROP", "COMMIT"]
    accepted = [line.split()[3] for line in rules if line.endswith("RETURN")]
    assert accepted == ["10.88.3.0/24", "10.87.3.1/32"]


def test_kubelet_settings_this_vm_needs(real_node: node.RealNode) -> None:
    config = real_node.kubelet_config({k: Path(k) for k in ("serving.crt", "serving.key")})
    assert config["failCgroupV1"] is False
    assert config["cgroupDriver"] == "cgroupfs"
    assert config["address"] == "10.87.3.2"
    assert config["clusterDNS"] == ["10.87.3.2"]
    assert config["authorization"] == {"mode": "Webhook"}
    assert config["authentication"]["anonymous"] == {"enabled": False}
    assert config["registerWithTaints"] == [{"key": node.TAINT_KEY, "value": "true", "effect": "NoSchedule"}]
    assert config["cgroupRoot"] == "/olm-node-3"


def test_containerd_restricts_oom_score_adj_and_uses_the_local_sandbox(real_node: node.RealNode) -> None:
    config = tomllib.loads(real_node.containerd_config())
    cri = config["plugins"]["io.containerd.grpc.v1.cri"]
    assert cri["restrict_oom_score_adj"] is True
    assert cri["sandbox_image"] == node.SANDBOX_IMAGE
    assert cri["cni"]["bin_dir"] == "/usr/lib/cni"


def test_cni_bridge_never_masquerades(real_node: node.RealNode) -> None:
    bridge = real_node.cni_config()["plugins"][0]
    assert bridge["ipMasq"] is False
    assert bridge["ipam"]["ranges"] == [[{"subnet": "10.88.3.0/24"}]]


def test_pause_archive_is_an_oci_layout_with_the_program(tmp_path: Path) -> None:
    program = tmp_path / "pause"
    program.write_bytes(b"\x7fELF pretend")
    archive = tmp_path / "pause.tar"
    node.write_pause_archive(program, archive)
    with tarfile.open(archive) as tar:
        files = {m.name: tar.extractfile(m).read() for m in tar.getmembers()}  # type: ignore[union-attr]

    def blob(digest: str) -> bytes:
        content = files[f"blobs/sha256/{digest.removeprefix('sha256:')}"]
        assert "sha256:" + hashlib.sha256(content).hexdigest() == digest
        return content

    (entry,) = json.loads(files["index.json"])["manifests"]
    assert entry["annotations"]["io.containerd.image.name"] == node.SANDBOX_IMAGE
    manifest = json.loads(blob(entry["digest"]))
    config = json.loads(blob(manifest["config"]["digest"]))
    assert config["config"]["Entrypoint"] == ["/pause"]
    (layer,) = manifest["layers"]
    with tarfile.open(fileobj=io.BytesIO(blob(layer["digest"]))) as tar:
        member = tar.getmember("pause")
        assert member.mode == 0o755
        assert tar.extractfile(member).read() == b"\x7fELF pretend"  # type: ignore[union-attr]


def test_placement_annotations_select_the_real_node_and_tolerate_its_taint() -> None:
    annotations = node.placement_annotations()
    assert annotations["scheduler.alpha.kubernetes.io/node-selector"] == f"{node.NODE_LABEL}=real"
    (toleration,) = json.loads(annotations["scheduler.alpha.kubernetes.io/defaultTolerations"])
    assert toleration["key"] == node.TAINT_KEY


def test_a_missing_tool_is_named_with_its_debian_package(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    if os.geteuid() != 0:
        pytest.skip("the root check comes first")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(nodenet.PrerequisiteMissing, match="install Debian's `iproute2` package"):
        nodenet.check_prerequisites()


def test_missing_node_binaries_are_named_with_the_build_command(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("the root check comes first")
    with pytest.raises(
        nodenet.PrerequisiteMissing, match=r"kubelet, kube-proxy, coredns, pause .*make cluster-binaries"
    ):
        node.check_prerequisites(tmp_path)
