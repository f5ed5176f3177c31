"""A controller's process imports only what a controller uses: what serves rare paths (the test
kit, the tracing SDK, the self-signed metrics certificate, kubeconfig YAML) is imported on first use,
which keeps an idle manager's resident memory down (`make bench-runtime`, scenario 4)."""

from __future__ import annotations

import subprocess
import sys

CONTROLLER_IMPORTS = (
    "from olm_runtime import cache, conditions, controller, events, finalizers, logging, ownerrefs\n"
    "from olm_runtime import tracing, workqueue\n"
    "from olm_runtime.client import Client, in_cluster_config, kinds\n"
    "from olm_runtime.manager import Manager, ManagerOptions\n"
)
NOT_IMPORTED = (
    "olm_runtime.testing",  # the test kit
    "pytest",
    "kubernetes_asyncio",
    "opentelemetry.sdk",  # only once OTEL_* turns tracing on
    "cryptography",  # only for a secure metrics listener without certificate files
    "yaml",  # only to read a kubeconfig file; in a Pod the in-cluster config needs none
    "olm",
)


def imported(code: str) -> set[str]:
    """The modules of NOT_IMPORTED that a fresh interpreter has imported after running `code`."""
    probe = f"{code}\nimport sys\nprint(*sorted(sys.modules))"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    loaded = set(result.stdout.split())
    return {name for name in NOT_IMPORTED if any(m == name or m.startswith(f"{name}.") for m in loaded)}


def test_a_controller_imports_nothing_it_does_not_use() -> None:
    assert imported(CONTROLLER_IMPORTS) == set()
