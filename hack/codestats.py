"""Figures about the code's shape: module lengths and the test-to-source ratio of each package.

    uv run --frozen python -m hack.codestats

Lines are physical lines of `.py` files. A package's tests are the test folders that exercise it
(`TESTS` below); a ratio above 1 means more lines of tests than of code.
"""

from __future__ import annotations

import statistics
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

TESTS: dict[str, tuple[str, ...]] = {
    "olm_runtime": ("unit/runtime", "unit/testing", "e2e/runtime", "e2e/foundation"),
    "olm/api": ("unit/api", "e2e/api"),
    "olm/fbc": ("unit/fbc",),
    "olm/semver": ("unit/semver",),
    "olm/oci": ("unit/oci", "e2e/oci"),
    "olm/compat": ("unit/compat",),
    "olm/registryv1": ("unit/registryv1",),
    "olm/pipeline": ("unit/pipeline", "e2e/preflight"),
    "olm/catalogd": ("unit/catalogd", "e2e/catalogd"),
    "olm/operator_controller": (
        "unit/operator_controller",
        "e2e/operator_controller",
        "e2e/clusterobjectset",
    ),
    "olm/cli": ("unit/cli", "e2e/cli"),
}
"""Each package and the test folders that exercise it (missing folders count as no tests)."""

MODULE_ROOTS = ("olm", "olm_runtime")


def lines(paths: Iterable[Path]) -> int:
    return sum(len(p.read_text().splitlines()) for p in paths)


def python_files(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.py")) if folder.exists() else []


def percentile(values: Sequence[int], fraction: float) -> float:
    """The `fraction` quantile by linear interpolation between the closest ranks."""
    if not values:
        raise ValueError("no values")
    ordered = sorted(values)
    position = fraction * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def module_lengths(root: Path) -> list[int]:
    """Lengths of the modules that hold code (package `__init__`s of a few lines are left out)."""
    result = []
    for folder in MODULE_ROOTS:
        for path in python_files(root / folder):
            length = len(path.read_text().splitlines())
            if path.name == "__init__.py" and length < 20:
                continue
            result.append(length)
    return result


def report(root: Path) -> str:
    out: list[str] = []
    lengths = module_lengths(root)
    out.append(
        f"modules in olm and olm_runtime: {len(lengths)}; lines median {statistics.median(lengths):.0f}, "
        f"90th percentile {percentile(lengths, 0.9):.0f}, longest {max(lengths)}"
    )
    out.append(f"{'package':<26}{'source':>8}{'tests':>8}{'ratio':>7}")
    for package, test_folders in TESTS.items():
        source = lines(python_files(root / package))
        if source == 0:
            continue
        tests = lines(p for folder in test_folders for p in python_files(root / folder))
        out.append(f"{package:<26}{source:>8}{tests:>8}{tests / source:>7.2f}")
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    del argv
    print(report(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
