"""The CLI's e2e tests use catalogd's e2e fixtures as they are: one real catalogd process per module
against the session's control plane, catalog images pushed to the session's registry. Importing them
here registers them for this directory."""

from __future__ import annotations

from e2e.catalogd.conftest import catalogd, catalogs, env

__all__ = ["catalogd", "catalogs", "env"]
