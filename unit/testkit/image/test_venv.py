"""The wheel platform follows the Debian layer's glibc."""

from __future__ import annotations

import pytest

from olm_testkit.image import shell, venv

STATUS = """\
Package: libc-bin
Status: install ok installed
Version: 2.36-9+deb12u10

Package: libc6
Status: install ok installed
Architecture: amd64
Version: 2.36-9+deb12u10
Description: GNU C Library: Shared libraries
"""


def test_glibc_version_is_libc6s_upstream_version() -> None:
    assert venv.glibc_version(STATUS) == (2, 36)


def test_glibc_version_ignores_an_epoch() -> None:
    assert venv.glibc_version("Package: libc6\nVersion: 1:2.41-6\n") == (2, 41)


def test_a_tree_without_libc6_is_an_error() -> None:
    with pytest.raises(shell.ImageBuildError, match="no libc6"):
        venv.glibc_version("Package: libc-bin\nVersion: 2.36-9\n")


def test_manylinux_platforms_name_every_glibc_up_to_the_trees_newest_first() -> None:
    tags = venv.manylinux_platforms((2, 36))
    assert tags[0] == "manylinux_2_36_x86_64"
    assert "manylinux_2_17_x86_64" in tags
    assert tags.index("manylinux_2_28_x86_64") < tags.index("manylinux_2_17_x86_64")
    assert {"manylinux2014_x86_64", "manylinux2010_x86_64", "manylinux1_x86_64"} <= set(tags)
    assert "manylinux_2_37_x86_64" not in tags


def test_legacy_manylinux_tags_need_their_glibc() -> None:
    tags = venv.manylinux_platforms((2, 12))
    assert "manylinux2010_x86_64" in tags
    assert "manylinux2014_x86_64" not in tags
