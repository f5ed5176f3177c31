"""`make bench-upstream`: the peer is refused clearly without boxcutter, and the table's ratios."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hack.bench.upstream import peer
from hack.bench.upstream.run import Table, reconciled


def test_without_boxcutter_the_peer_is_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(peer.BOXCUTTER_ENV, raising=False)
    with pytest.raises(peer.PeerUnavailable, match=peer.BOXCUTTER_ENV):
        peer.build()


def test_a_directory_without_the_boxcutter_module_is_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "go.mod").write_text("module example.com/other\n\ngo 1.26\n")
    monkeypatch.setenv(peer.BOXCUTTER_ENV, str(tmp_path))
    with pytest.raises(peer.PeerUnavailable, match=re.escape(f"holds no {peer.BOXCUTTER_MODULE} module")):
        peer.build()


def test_the_table_prints_medians_and_ratios_ours_over_upstream() -> None:
    table = Table()
    for value in (2.0, 9.0, 3.0):
        table.record("catalog create to Serving", "s", "upstream", value)
    for value in (1.5, 1.0, 9.0):
        table.record("catalog create to Serving", "s", "ours", value)
    table.record("RSS", "MiB", "ours", 50.0)
    lines = table.render().splitlines()
    assert lines[2] == "| catalog create to Serving | 3.0 s | 1.5 s | 0.50 | 3 |"
    assert lines[3] == "| RSS | - | 50.0 MiB | - | 1 |"


def test_reconciles_and_queue_depth_are_read_per_controller() -> None:
    metrics = """\
# HELP controller_runtime_reconcile_total Total number of reconciliations per controller
# TYPE controller_runtime_reconcile_total counter
controller_runtime_reconcile_total{controller="clusterextension",result="success"} 198
controller_runtime_reconcile_total{controller="clusterextension",result="error"} 2
controller_runtime_reconcile_total{controller="clusterobjectset",result="success"} 7
# HELP workqueue_depth Current depth of the workqueue.
# TYPE workqueue_depth gauge
workqueue_depth{controller="clusterextension",name="clusterextension"} 0
workqueue_depth{controller="clusterobjectset",name="clusterobjectset"} 3
"""
    assert reconciled(metrics, "clusterextension") == (200.0, 0.0)
    assert reconciled(metrics, "clusterobjectset") == (7.0, 3.0)
    assert reconciled(metrics, "clustercatalog") == (0.0, 0.0)
