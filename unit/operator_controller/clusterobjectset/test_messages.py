"""Status messages of the rollout list objects deterministically and stay bounded."""

from __future__ import annotations

from olm.operator_controller.clusterobjectset import rollout


def test_collision_message_lists_sorted_objects() -> None:
    message = rollout.collision_message("config", ["b is controlled by X", "a exists"])
    assert message == 'revision object collisions in phase "config":\n- a exists\n- b is controlled by X'


def test_long_listings_are_cut_and_counted() -> None:
    lines = [f"object {i:02d}: not ready" for i in range(25)]
    message = rollout.probe_message("deploy", lines)
    assert message.startswith('Phase "deploy" is not ready:\n- object 00: not ready')
    assert message.count("\n- object") == rollout.MAX_LISTED
    assert message.endswith(f"- and {25 - rollout.MAX_LISTED} more")
