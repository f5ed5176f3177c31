"""Build hook: ship the repository's top-level `olm_runtime` package in olm-runtime's wheel and sdist.

The package stays at the repository's root (where the root project's tools and imports find it), so
in a checkout it is force-included from the parent directory. The sdist carries it inside, where a
wheel built from the unpacked sdist selects it by the project's name without this hook's help.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

PACKAGE = "olm_runtime"


class RuntimePackageHook(BuildHookInterface):
    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if version == "editable":
            return  # dev-mode-dirs puts the checkout's root on sys.path instead
        root = Path(self.root)
        if (root / PACKAGE).is_dir():
            return  # an unpacked sdist: the package is here and hatchling selects it by name
        source = root.parent / PACKAGE
        if not (source / "__init__.py").is_file():
            raise FileNotFoundError(f"no {PACKAGE} package at {source}")
        build_data["force_include"][str(source)] = PACKAGE
