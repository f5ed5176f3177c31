"""The node networks of one cluster: allocated, cleared of what dead nodes left, created, removed.

A cluster is named by its state directory (the owner of its node networks, `nodenet.allocate`);
the node on network `k` keeps its files in `state_dir(owner, network)`, so the leftovers of a
cluster that died are found from its networks' markers alone.
"""

from __future__ import annotations

from pathlib import Path

from olm_testkit import nodenet
from olm_testkit.node.cleanup import cleanup
from olm_testkit.node.layout import NodeLayout, node_name


def state_dir(owner: Path, network: nodenet.NodeNetwork) -> Path:
    """Where the node on `network` of the cluster `owner` keeps its files."""
    return owner / "nodes" / node_name(network.index)


def prepare(owner: Path, count: int, *, reuse: bool = False) -> list[nodenet.NodeNetwork]:
    """`count` node networks for the cluster `owner`, ready for nodes to start on; the first is the
    one its control plane listens on. `reuse` keeps a network that exists (a cluster started again
    by `make run`); otherwise each is made afresh."""
    networks = []
    for allocation in nodenet.allocate(owner, count):
        network = allocation.network
        if allocation.previous_owner is not None:
            cleanup(state_dir(allocation.previous_owner, network), network)
        if not (reuse and network.exists()):
            network.create()
        networks.append(network)
    return networks


def stop_nodes(owner: Path) -> list[nodenet.NodeNetwork]:
    """Stop every node of the cluster `owner` and remove what it made, keeping the networks (the
    control plane may still listen on the first); return them for `release`."""
    held = nodenet.held_by(owner)
    for network in held:
        layout = NodeLayout(state_dir(owner, network), network)
        cleanup(layout.state_dir, network, keep_network=True)
        layout.state_file.unlink(missing_ok=True)
    return held


def release(networks: list[nodenet.NodeNetwork]) -> None:
    """Delete the networks and forget them, once nothing listens on them."""
    for network in networks:
        network.delete()
        nodenet.release(network)
