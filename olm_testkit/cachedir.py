"""Where OLM's development tools keep what they build: `$OLMPY_CACHE_DIR`, else
`$XDG_CACHE_HOME/olm-py` (`~/.cache/olm-py`). Binaries, the OLM image's layers and bundle pulls live
below it, each in a directory of its own."""

from __future__ import annotations

import os
from pathlib import Path


def root() -> Path:
    base = os.environ.get("OLMPY_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "olm-py"
    )
    return Path(base)
