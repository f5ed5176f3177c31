"""Both processes ask the API server to end their watches after 30 to 60 minutes, not 5 to 10."""

from __future__ import annotations

import argparse
from collections.abc import Callable

import pytest

from olm.catalogd import main as catalogd_main
from olm.operator_controller import main as operator_controller_main
from olm.process import flags


@pytest.mark.parametrize(
    ("parser", "argv"),
    [
        (catalogd_main.parser, ["--tls-cert=/certs/tls.crt", "--tls-key=/certs/tls.key"]),
        (operator_controller_main.parser, []),
    ],
)
def test_every_watch_of_the_processes_is_renewed_after_30_to_60_minutes(
    parser: Callable[[], argparse.ArgumentParser], argv: list[str]
) -> None:
    reflector = flags.manager_options(flags.parse(parser(), argv)).cache.reflector
    assert (reflector.min_watch_timeout, reflector.max_watch_timeout) == (1800.0, 3600.0)
    # The watchdog that reopens a silent watch is unchanged: a renewal is not what finds a dead one.
    assert reflector.inactivity_timeout == 90.0
