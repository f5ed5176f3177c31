"""A `Resolved` event is news: a bundle this process has not reported, and after a restart not the
bundle already installed."""

from __future__ import annotations

from olm.operator_controller.clusterextension.state import Memory


def test_a_first_install_is_news_once() -> None:
    memory = Memory()
    assert memory.newly_resolved("ext", "op.v1", installed=None)
    assert not memory.newly_resolved("ext", "op.v1", installed=None)


def test_after_a_restart_the_installed_bundle_is_not_news() -> None:
    memory = Memory()  # a new process remembers nothing
    assert not memory.newly_resolved("ext", "op.v1", installed="op.v1")
    assert not memory.newly_resolved("ext", "op.v1", installed="op.v1")


def test_an_upgrade_is_news_whether_or_not_the_process_restarted() -> None:
    restarted = Memory()
    assert restarted.newly_resolved("ext", "op.v2", installed="op.v1")
    running = Memory()
    assert running.newly_resolved("ext", "op.v1", installed=None)
    assert running.newly_resolved("ext", "op.v2", installed="op.v1")
    assert not running.newly_resolved("ext", "op.v2", installed="op.v1")


def test_a_forgotten_extension_starts_over() -> None:
    memory = Memory()
    assert memory.newly_resolved("ext", "op.v1", installed=None)
    memory.forget("ext")
    assert memory.newly_resolved("ext", "op.v1", installed=None)
