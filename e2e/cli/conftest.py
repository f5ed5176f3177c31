"""The CLI's e2e tests use catalogd's e2e fixtures as they are: one real catalogd process per module
against the session's control plane, catalog images pushed to the session's registry. Importing them
here registers them for this directory (and the hook that shows catalogd's log when a test fails)."""

from __future__ import annotations

from e2e.catalogd.conftest import (
    _register_logs,
    _show_catalogd_logs,
    catalog_crds,
    catalogd,
    catalogs,
    env,
    kube,
    pusher,
    pytest_runtest_makereport,
)

__all__ = [
    "_register_logs",
    "_show_catalogd_logs",
    "catalog_crds",
    "catalogd",
    "catalogs",
    "env",
    "kube",
    "pusher",
    "pytest_runtest_makereport",
]
