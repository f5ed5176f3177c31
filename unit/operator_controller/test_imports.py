"""operator-controller loads no pydantic and no API models: it reads ClusterExtensions through
`olm.api.extensionspec` and writes ClusterObjectSets as dicts, which keeps its resident memory about
11 MiB below what the models cost (docs/dev/bench-upstream.md, operator-controller RSS idle)."""

from __future__ import annotations

import subprocess
import sys

NOT_IMPORTED = ("pydantic", "pydantic_core", "olm.api.base", "olm.api.models", "olm.catalogd", "olm.cli")


def test_operator_controller_imports_neither_pydantic_nor_the_api_models() -> None:
    probe = "import olm.operator_controller.main, sys\nprint(*sorted(sys.modules))"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    loaded = set(result.stdout.split())
    assert "olm.api.extensionspec" in loaded
    leaked = {name for name in NOT_IMPORTED if any(m == name or m.startswith(f"{name}.") for m in loaded)}
    assert leaked == set()
