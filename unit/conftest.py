"""Unit-test configuration: Hypothesis profiles.

In CI (`CI` set) property tests run derandomized, so a run fails or passes the same way every
time and a failure seen there reproduces locally with `HYPOTHESIS_PROFILE=ci`. Deadlines are off
everywhere: the machines are shared and a slow example is not a failing one.
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev"))
