"""The client's public surface is pinned: changing it must be a decision, not an accident."""

from __future__ import annotations

import subprocess
import sys

from olm_runtime import client
from olm_runtime.client import errors


def test_client_exports_exactly_these_names() -> None:
    assert sorted(client.__all__) == [
        "Client",
        "ConfigError",
        "CredentialError",
        "ExecCredentials",
        "ExecPlugin",
        "FileToken",
        "GroupVersionKind",
        "GroupVersionResource",
        "NoKindMatch",
        "ObjectList",
        "PatchType",
        "Preconditions",
        "PropagationPolicy",
        "RESTMapper",
        "ResourceInfo",
        "RestConfig",
        "StaticToken",
        "TokenProvider",
        "Transport",
        "WatchEvent",
        "errors",
        "in_cluster_config",
        "kinds",
        "load_config",
    ]
    for name in client.__all__:
        assert getattr(client, name) is not None


def test_errors_exports_exactly_these_names() -> None:
    assert sorted(errors.__all__) == [
        "APIError",
        "AlreadyExists",
        "BadRequest",
        "Cause",
        "Conflict",
        "Forbidden",
        "Gone",
        "InternalError",
        "Invalid",
        "MethodNotAllowed",
        "NotFound",
        "ServerTimeout",
        "ServiceUnavailable",
        "TooManyRequests",
        "TransportError",
        "Unauthorized",
        "from_response",
        "from_status",
        "is_resource_version_too_large",
    ]


def test_importing_the_client_does_not_import_kubernetes_asyncio() -> None:
    # kubernetes_asyncio's package __init__ imports every generated model (~65 MiB resident).
    code = (
        "import sys, olm_runtime.client; print(any(m.startswith('kubernetes_asyncio') for m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"
