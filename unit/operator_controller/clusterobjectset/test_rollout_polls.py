"""When a rolling-out revision with polled kinds looks again: soon after each change of what it
waits for, then less and less often, never less often than the drift poll interval."""

from __future__ import annotations

from olm.operator_controller.clusterobjectset.reconciler import FIRST_ROLLOUT_POLL, RolloutPolls

INTERVAL = 30.0


def test_looks_back_off_while_nothing_changes_up_to_the_interval() -> None:
    polls = RolloutPolls()
    waits = [polls.next("Deployment x not Available", INTERVAL) for _ in range(8)]
    assert waits == [FIRST_ROLLOUT_POLL * 2**n for n in range(5)] + [INTERVAL] * 3
    assert waits == [1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0, 30.0]


def test_a_change_of_what_the_rollout_waits_for_starts_again_at_the_first_look() -> None:
    polls = RolloutPolls()
    for _ in range(6):
        polls.next("CRD not Established", INTERVAL)
    assert polls.next("Deployment x not Available", INTERVAL) == FIRST_ROLLOUT_POLL
    assert polls.next("Deployment x not Available", INTERVAL) == 2 * FIRST_ROLLOUT_POLL


def test_a_short_interval_bounds_every_look() -> None:
    polls = RolloutPolls()
    assert [polls.next("waiting", 2.0) for _ in range(4)] == [1.0, 2.0, 2.0, 2.0]
