"""Seams that exist only for tests. Every one is off unless its environment variable is set.

Some behaviour cannot be tested at its real scale: a revision's progress deadline is at least ten
minutes, a catalog polls at most once a minute, and a crash between two API writes does not happen
on request. These variables let the e2e suites reach those paths quickly:

- `OLM_TESTING_CRASH_AFTER_SECRETS=1` (operator-controller): SIGKILL itself right after a
  revision's Secrets are created, before the revision is;
- `OLM_TESTING_DEADLINE_MINUTE_SECONDS=<s>` (operator-controller): one minute of
  `progressDeadlineMinutes` lasts `s` seconds;
- `OLM_TESTING_POLL_MINUTE_SECONDS=<s>` (catalogd, operator-controller): one minute of a
  ClusterCatalog's, or a bundle image source's, `pollIntervalMinutes` lasts `s` seconds;
- `OLM_TESTING_SCOPE_SELECTOR=<label selector>` (both): the process reconciles only the objects of
  its own kinds (ClusterCatalogs; ClusterExtensions and ClusterObjectSets) that the selector
  matches, so a suite's shared process (`!olm-py.io/test-scope`) leaves alone the objects a test
  reconciles with a controller of its own (`olm-py.io/test-scope=<the test's>`).

They are environment variables rather than flags so that `--help` never offers them. A process
started with any of them logs a warning naming each one. Nothing under `manifests/` sets them (a
unit test reads every manifest to make sure), and an unknown `OLM_TESTING_*` variable or a value that
does not parse stops the process at start rather than being ignored.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, fields

from olm_runtime import cache

__all__ = [
    "CRASH_AFTER_SECRETS",
    "DEADLINE_MINUTE_SECONDS",
    "OFF",
    "POLL_MINUTE_SECONDS",
    "PREFIX",
    "SCOPE_LABEL",
    "SCOPE_SELECTOR",
    "SeamError",
    "Seams",
]

PREFIX = "OLM_TESTING_"
CRASH_AFTER_SECRETS = "OLM_TESTING_CRASH_AFTER_SECRETS"
DEADLINE_MINUTE_SECONDS = "OLM_TESTING_DEADLINE_MINUTE_SECONDS"
POLL_MINUTE_SECONDS = "OLM_TESTING_POLL_MINUTE_SECONDS"
SCOPE_SELECTOR = "OLM_TESTING_SCOPE_SELECTOR"
SCOPE_LABEL = "olm-py.io/test-scope"
"""The label tests scope objects with (the seam takes any selector; the suites select on this one)."""


class SeamError(ValueError):
    """An `OLM_TESTING_*` variable that is unknown or does not parse."""


@dataclass(frozen=True, kw_only=True)
class Seams:
    """Which seams are on; the defaults are production behaviour."""

    crash_after_secrets: bool = False
    deadline_minute_seconds: float = 60.0
    poll_minute_seconds: float = 60.0
    scope_selector: str = ""
    """Label selector narrowing the objects reconciled; empty: all of them."""

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> Seams:
        env = os.environ if environ is None else environ
        unknown = sorted(k for k in env if k.startswith(PREFIX) and k not in _VARIABLES)
        if unknown:
            raise SeamError(
                f"unknown testing variable(s) {', '.join(unknown)}; known: {', '.join(_VARIABLES)}"
            )
        values: dict[str, object] = {}
        if CRASH_AFTER_SECRETS in env:
            if env[CRASH_AFTER_SECRETS] not in ("0", "1"):
                raise SeamError(f"{CRASH_AFTER_SECRETS} must be 0 or 1, got {env[CRASH_AFTER_SECRETS]!r}")
            values["crash_after_secrets"] = env[CRASH_AFTER_SECRETS] == "1"
        for variable, field in (
            (DEADLINE_MINUTE_SECONDS, "deadline_minute_seconds"),
            (POLL_MINUTE_SECONDS, "poll_minute_seconds"),
        ):
            if variable in env:
                values[field] = _seconds(variable, env[variable])
        if SCOPE_SELECTOR in env:
            try:
                cache.parse_selector(env[SCOPE_SELECTOR])
            except ValueError as error:
                raise SeamError(f"{SCOPE_SELECTOR} is not a label selector: {error}") from None
            values["scope_selector"] = env[SCOPE_SELECTOR]
        return cls(**values)  # type: ignore[arg-type]

    def enabled(self) -> dict[str, object]:
        """The seams that differ from production, by field name (empty in production)."""
        return {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if getattr(self, f.name) != getattr(OFF, f.name)
        }


def _seconds(variable: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise SeamError(f"{variable} must be a number of seconds, got {text!r}") from None
    if not (value > 0 and math.isfinite(value)):
        raise SeamError(f"{variable} must be a positive number of seconds, got {text!r}")
    return value


_VARIABLES = (CRASH_AFTER_SECRETS, DEADLINE_MINUTE_SECONDS, POLL_MINUTE_SECONDS, SCOPE_SELECTOR)
OFF = Seams()
"""Production: no seam enabled."""
