"""Status messages of the rollout: upstream's where upstream has one; listings deterministic and
bounded."""

from __future__ import annotations

from typing import Any

import pytest

from olm.operator_controller.clusterobjectset import rollout


def test_collision_message_lists_sorted_objects() -> None:
    message = rollout.collision_message("config", ["b is controlled by X", "a exists"])
    assert message == 'revision object collisions in phase "config":\n- a exists\n- b is controlled by X'


def test_long_listings_are_cut_and_counted() -> None:
    lines = [f"object {i:02d}: not ready" for i in range(25)]
    message = rollout.probe_detail("deploy", lines)
    assert message.startswith('Phase "deploy" is not ready:\n- object 00: not ready')
    assert message.count("\n- object") == rollout.MAX_LISTED
    assert message.endswith(f"- and {25 - rollout.MAX_LISTED} more")


@pytest.mark.parametrize(
    ("obj", "messages", "want"),
    [
        pytest.param(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": {"name": "data", "namespace": "ns"},
            },
            ['value at key "status.phase" != "Bound"; expected: "Bound" got: "Pending"'],
            'Object PersistentVolumeClaim.v1 ns/data: value at key "status.phase" != "Bound"; '
            'expected: "Bound" got: "Pending"',
            id="core-namespaced",
        ),
        pytest.param(
            {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "m", "namespace": "ns"}},
            ["first", "second"],
            "Object Deployment.apps/v1 ns/m: first and second",
            id="grouped-checks-joined-with-and",
        ),
        pytest.param(
            {
                "apiVersion": "apiextensions.k8s.io/v1",
                "kind": "CustomResourceDefinition",
                "metadata": {"name": "w.x"},
            },
            ["not established"],
            "Object CustomResourceDefinition.apiextensions.k8s.io/v1 /w.x: not established",
            id="cluster-scoped-has-an-empty-namespace",
        ),
    ],
)
def test_probe_message_is_upstreams(obj: dict[str, Any], messages: list[str], want: str) -> None:
    assert rollout.probe_message(obj, messages) == want
