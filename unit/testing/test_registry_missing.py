"""A missing registry binary is named, with the Debian package to install."""

from __future__ import annotations

from pathlib import Path

import pytest

from olm_runtime.testing import process
from olm_runtime.testing.pki import CertificateAuthority
from olm_runtime.testing.registry import Registry, RegistryOptions


def test_missing_registry_binary_names_the_package_to_install(tmp_path: Path) -> None:
    ca = CertificateAuthority.load_or_create(tmp_path / "pki")
    registry = Registry(RegistryOptions(state_dir=tmp_path / "reg", ca=ca, binary="no-such-registry-binary"))
    with pytest.raises(process.ComponentFailure, match="install Debian's `docker-registry` package"):
        registry.up()
