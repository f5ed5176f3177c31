"""Neither process loads pydantic nor the API models: catalogd reads ClusterCatalogs as dicts and
checks FBC objects with hand-written parsers, operator-controller reads ClusterExtensions through
`olm.api.extensionspec` and writes ClusterObjectSets as dicts. That keeps each process's resident
memory 10 to 11 MiB below what the models cost (docs/dev/bench-upstream.md, the RSS rows)."""

from __future__ import annotations

import subprocess
import sys

import pytest

MODELS = ("pydantic", "pydantic_core", "olm.api.base", "olm.api.models")


@pytest.mark.parametrize(
    ("main", "reader", "not_imported"),
    [
        pytest.param("olm.catalogd.main", "olm.fbc", (*MODELS, "olm.operator_controller"), id="catalogd"),
        pytest.param(
            "olm.operator_controller.main",
            "olm.api.extensionspec",
            (*MODELS, "olm.catalogd", "olm.cli"),
            id="operator-controller",
        ),
    ],
)
def test_a_process_imports_neither_pydantic_nor_the_api_models(
    main: str, reader: str, not_imported: tuple[str, ...]
) -> None:
    probe = f"import {main}, sys\nprint(*sorted(sys.modules))"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    loaded = set(result.stdout.split())
    assert reader in loaded
    leaked = {name for name in not_imported if any(m == name or m.startswith(f"{name}.") for m in loaded)}
    assert leaked == set()
