"""Which node networks a cluster gets: the ones it holds, then free or stale ones, in index order."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from olm_runtime.testing.process import ComponentFailure
from olm_testkit import nodenet
from olm_testkit.node import networks

NO_SUCH_PID = 2**22 + 1  # above the kernel's largest pid_max


@pytest.fixture
def markers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "markers"
    monkeypatch.setattr(nodenet, "MARKER_DIR", directory)
    directory.mkdir()
    return directory


def mark(markers: Path, index: int, owner: str, pid: int) -> None:
    (markers / str(index)).write_text(json.dumps({"owner": owner, "pids": [pid]}))


def test_a_cluster_keeps_its_networks_and_takes_free_or_stale_ones_in_index_order(markers: Path) -> None:
    mark(markers, 0, "/clusters/a", os.getpid())
    mark(markers, 1, "/clusters/dead", NO_SUCH_PID)
    mark(markers, 3, "/clusters/c", os.getpid())
    got = nodenet.allocate(Path("/clusters/b"), 3)
    assert [(a.network.index, a.previous_owner) for a in got] == [
        (1, Path("/clusters/dead")),
        (2, None),
        (4, None),
    ]
    assert [n.index for n in nodenet.held_by(Path("/clusters/b"))] == [1, 2, 4]
    # Held networks come back first and without leftovers to clean; then new ones, sorted in.
    again = nodenet.allocate(Path("/clusters/a"), 2)
    assert [(a.network.index, a.previous_owner) for a in again] == [(0, None), (5, None)]


def test_too_few_free_networks_takes_none(markers: Path) -> None:
    for index in range(nodenet.MAX_NODES - 1):
        mark(markers, index, f"/clusters/{index}", os.getpid())
    with pytest.raises(ComponentFailure, match="2 node networks wanted"):
        nodenet.allocate(Path("/clusters/late"), 2)
    assert nodenet.held_by(Path("/clusters/late")) == []


def test_each_node_of_a_cluster_keeps_its_files_apart() -> None:
    owner = Path("/clusters/a")
    paths = {networks.state_dir(owner, nodenet.NodeNetwork(index=k)) for k in (0, 1)}
    assert paths == {owner / "nodes" / "real-node-0", owner / "nodes" / "real-node-1"}
