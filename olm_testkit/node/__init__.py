"""Real nodes beside the kwok nodes, each with kubelet, containerd with runc, a CNI bridge, kube-proxy
(iptables mode) and CoreDNS as the cluster DNS, inside a network namespace of its own
(`olm_testkit.nodenet.NodeNetwork`).

Pods on them really run: images are pulled by containerd (from the registry on the host end of the
cluster's first node network, trusted through the CA given), Services work through kube-proxy's
rules, names resolve through CoreDNS, Pods reach Pods on the other nodes, and the `kubernetes`
Service leads to the API server. Each node registers with a NoSchedule taint (`TAINT_KEY`) and the
label `NODE_LABEL=real`, so only Pods that ask for it land there; `placement_annotations()` makes a
whole namespace ask.

One module per concept:

- `layout`: the node's name and where it keeps each file;
- `credentials`, `containerd`, `cni`, `kubelet`, `kubeproxy`, `coredns`: each component's
  configuration and command line (what this kind of VM needs is said where it is set);
- `sandbox`: the Pod sandbox image, the pause program built here;
- `placement`: the taint, the label and the namespace annotations that choose the real node;
- `prerequisites`: the packages, kernel features and binaries a machine needs;
- `cgroups`, `cleanup`: the node's cgroup, and removing everything a node made (`down()`, or the
  next `up()` after its owner died): containers killed through their cgroups, the shims and
  containerd stopped, mounts under the state directory and the Pods' network namespaces removed,
  the cgroups deleted;
- `lifecycle`: `RealNode` (`up`, `down`, `check`) and `NodeOptions`;
- `networks`: a cluster's node networks (several nodes share one cluster: the host routes between
  their networks), allocated and cleared of a dead cluster's leftovers, and where each node keeps
  its files.
"""

from __future__ import annotations

from olm_testkit.node import networks
from olm_testkit.node.cleanup import cleanup
from olm_testkit.node.coredns import CLUSTER_DOMAIN, resolve
from olm_testkit.node.lifecycle import NodeOptions, RealNode
from olm_testkit.node.placement import NODE_LABEL, TAINT_KEY, placement_annotations
from olm_testkit.node.prerequisites import BINARIES, check_prerequisites
from olm_testkit.node.sandbox import SANDBOX_IMAGE, write_pause_archive

__all__ = [
    "BINARIES",
    "CLUSTER_DOMAIN",
    "NODE_LABEL",
    "SANDBOX_IMAGE",
    "TAINT_KEY",
    "NodeOptions",
    "RealNode",
    "check_prerequisites",
    "cleanup",
    "networks",
    "placement_annotations",
    "resolve",
    "write_pause_archive",
]
