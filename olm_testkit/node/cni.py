"""The Pods' network: a CNI bridge inside the node's namespace, with host-local addresses from the
node's Pod CIDR and no masquerade (Pod traffic keeps its source address and cannot be routed off the
machine). The plugins are Debian's `containernetworking-plugins`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from olm_testkit.nodenet import NodeNetwork

BIN_DIR = Path("/usr/lib/cni")
PLUGINS = ("bridge", "host-local", "loopback", "portmap")
CONFIG_FILE = "10-olm.conflist"


def config(network: NodeNetwork) -> dict[str, Any]:
    return {
        "cniVersion": "0.4.0",
        "name": network.netns,
        "plugins": [
            {
                "type": "bridge",
                "bridge": network.bridge,
                "isGateway": True,
                "ipMasq": False,
                "hairpinMode": True,
                "ipam": {
                    "type": "host-local",
                    "ranges": [[{"subnet": network.pod_cidr}]],
                    "routes": [{"dst": "0.0.0.0/0"}],
                },
            },
            {"type": "portmap", "capabilities": {"portMappings": True}},
        ],
    }
