"""The controller package's public names are deliberate: changing them must change this test."""

from __future__ import annotations

from olm_runtime import controller


def test_exported_names() -> None:
    assert sorted(controller.__all__) == [
        "Builder",
        "CONTINUE",
        "Controller",
        "EXPECTED_ERRORS",
        "Next",
        "Options",
        "Reconciler",
        "ReconcilerFunc",
        "Request",
        "Result",
        "RetryableError",
        "STOP",
        "Steps",
        "TerminalError",
        "event",
        "handler",
        "predicate",
        "source",
        "steps",
    ]
    assert all(hasattr(controller, name) for name in controller.__all__)
