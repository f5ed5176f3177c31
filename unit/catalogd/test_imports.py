"""catalogd loads no pydantic and no API models: it reads ClusterCatalogs as dicts and checks FBC
objects with hand-written parsers, which keeps its resident memory about 10 MiB below what the models
cost (docs/dev/bench-upstream.md, catalogd RSS)."""

from __future__ import annotations

import subprocess
import sys

NOT_IMPORTED = ("pydantic", "pydantic_core", "olm.api.base", "olm.api.models", "olm.operator_controller")


def test_catalogd_imports_neither_pydantic_nor_the_api_models() -> None:
    probe = "import olm.catalogd.main, sys\nprint(*sorted(sys.modules))"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    loaded = set(result.stdout.split())
    assert "olm.fbc" in loaded
    leaked = {name for name in NOT_IMPORTED if any(m == name or m.startswith(f"{name}.") for m in loaded)}
    assert leaked == set()
