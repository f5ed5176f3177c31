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

from olm_runtime.testing.pki import CertificateAuthority
from olm_testkit import node, nodenet
from olm_testkit.node import cni, containerd, coredns, credentials, kubelet, kubeproxy
from olm_testkit.node.layout import NodeLayout


@pytest.fixture
def layout(tmp_path: Path) -> NodeLayout:
    return NodeLayout(tmp_path / "node", nodenet.NodeNetwork(index=3))


def test_addresses_of_a_node_index() -> None:
    network = nodenet.NodeNetwork(index=3)
    assert (network.host_ip, network.node_ip, network.pod_cidr) == ("10.87.3.1", "10.87.3.2", "10.88.3.0/24")
    assert network.enter(["ip", "addr"]) == ["nsenter", "--net=/run/netns/olm-node-3", "--", "ip", "addr"]


def test_pod_traffic_is_forwarded_only_to_pods_and_node_links() -> None:
    rules = nodenet.NodeNetwork(index=3).forward_rules().splitlines()
    assert rules[-2:] == ["-A OLMPY-FORWARD -j DROP", "COMMIT"]
    accepted = [line.split()[3] for line in rules if line.endswith("RETURN")]
    assert accepted == ["10.88.0.0/16", "10.87.0.0/16"]


def test_kubelet_settings_this_vm_needs(layout: NodeLayout) -> None:
    config = kubelet.config(
        layout, ca_file=Path("ca.crt"), serving_cert=Path("serving.crt"), serving_key=Path("serving.key")
    )
    assert config["failCgroupV1"] is False
    assert config["cgroupDriver"] == "cgroupfs"
    assert config["address"] == "10.87.3.2"
    assert config["clusterDNS"] == ["10.87.3.2"]
    assert config["authorization"] == {"mode": "Webhook"}
    assert config["authentication"]["anonymous"] == {"enabled": False}
    assert config["registerWithTaints"] == [{"key": node.TAINT_KEY, "value": "true", "effect": "NoSchedule"}]
    assert config["cgroupRoot"] == "/olm-node-3"


def test_containerd_restricts_oom_score_adj_and_uses_the_local_sandbox(layout: NodeLayout) -> None:
    config = tomllib.loads(containerd.config(layout))
    cri = config["plugins"]["io.containerd.grpc.v1.cri"]
    assert cri["restrict_oom_score_adj"] is True
    assert cri["sandbox_image"] == node.SANDBOX_IMAGE
    assert cri["cni"]["bin_dir"] == "/usr/lib/cni"
    assert cri["cni"]["conf_dir"] == str(layout.cni_conf_dir)
    assert cri["containerd"]["runtimes"]["runc"]["options"]["Root"] == str(layout.containerd_dir / "runc")


def test_cni_bridge_never_masquerades(layout: NodeLayout) -> None:
    bridge = cni.config(layout.network)["plugins"][0]
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


def test_kube_proxy_and_coredns_serve_on_the_node_address(layout: NodeLayout, tmp_path: Path) -> None:
    proxy = kubeproxy.config(layout)
    assert (proxy["mode"], proxy["bindAddress"], proxy["clusterCIDR"]) == (
        "iptables",
        "10.87.3.2",
        "10.88.0.0/16",
    )
    assert proxy["conntrack"]["maxPerCore"] == 0  # the kernel's conntrack settings are left alone
    corefile = coredns.corefile(layout, kubeconfig=tmp_path / "admin.kubeconfig")
    assert "    bind 10.87.3.2" in corefile.splitlines()
    assert f"kubeconfig {tmp_path / 'admin.kubeconfig'}" in corefile


def test_the_nodes_kubeconfigs_carry_its_own_identities(layout: NodeLayout, tmp_path: Path) -> None:
    ca = CertificateAuthority.load_or_create(tmp_path / "pki")
    issued = credentials.issue(ca, layout)
    layout.state_dir.mkdir()
    path = credentials.write_kubeconfig(
        layout.kubelet_kubeconfig, server="https://10.87.3.1:6443", ca_file=ca.cert_file, user="kubelet",
        identity=issued.kubelet,
    )  # fmt: skip
    config = json.loads(path.read_text())
    assert config["users"][0]["user"]["client-certificate"] == str(issued.kubelet.cert_file)
    assert config["clusters"][0]["cluster"]["server"] == "https://10.87.3.1:6443"
    assert path.stat().st_mode & 0o777 == 0o600
    assert issued.kubelet.cert_file.name.startswith("real-node-3-kubelet")


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


def test_containerd_mirrors_docker_hub_to_the_local_registry(layout: NodeLayout) -> None:
    config = tomllib.loads(containerd.config(layout))
    registry = config["plugins"]["io.containerd.grpc.v1.cri"]["registry"]
    assert registry["config_path"] == str(layout.registry_hosts_dir)
    hosts = tomllib.loads(containerd.mirror_hosts("10.87.0.1:5000"))
    assert hosts["server"] == "https://registry-1.docker.io"
    assert hosts["host"] == {"https://10.87.0.1:5000": {"capabilities": ["pull", "resolve"]}}
