"""The version of OLM that is running: olm-py's, as installed (docs/dev/release.md)."""

from __future__ import annotations

import importlib.metadata

__all__ = ["DISTRIBUTION", "installed"]

DISTRIBUTION = "olm-py"
"""The distribution catalogd, operator-controller and olmctl are console scripts of."""


def installed() -> str:
    """A release's version (`1.2.0`) or a snapshot's, naming its commit (`1.2.1.dev4+g0123456789ab`)."""
    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return "unknown (not installed)"
