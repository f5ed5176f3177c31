"""Run one test directory again and again, under CPU contention, and count what fails.

    uv run --frozen python -m hack.flakehunt e2e/catalogd --runs 10
    make flake-hunt DIR=e2e/catalogd RUNS=10

Each run is a pytest session of its own (so a fresh control plane, as in `make test`) in random
order with a new seed (pytest-randomly; `--fixed-order` turns that off). While the runs go on, one
busy process per `--busy` spins on the CPU, so the tests meet the scheduling delays of a loaded
machine: a test that passes only when its process gets the CPU on time is a flaky test. The runs'
JUnit reports and outputs are kept under `build/flake-hunt/<dir>/`; the table printed at the end
gives, per failing test, how often it failed and with which seeds, so a failure can be replayed with
`pytest -p randomly --randomly-seed=SEED DIR`.
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import random
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Run:
    number: int
    seed: int | None
    seconds: float
    exit_code: int
    passed: int = 0
    failures: list[str] = field(default_factory=list)
    """Test ids that failed or erred."""


def _spin() -> None:
    while True:
        pass


@contextlib.contextmanager
def contention(processes: int) -> Iterator[None]:
    """`processes` busy loops for the duration of the block."""
    busy = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(processes)]
    for process in busy:
        process.start()
    try:
        yield
    finally:
        for process in busy:
            process.terminate()
        for process in busy:
            process.join()


def outcome(report: Path) -> tuple[int, list[str]]:
    """(tests passed, ids of tests that failed or erred) from a JUnit report."""
    passed, failed = 0, []
    for case in ET.parse(report).getroot().iter("testcase"):
        test_id = f"{case.get('classname', '')}::{case.get('name', '')}"
        if case.find("failure") is not None or case.find("error") is not None:
            failed.append(test_id)
        elif case.find("skipped") is None:
            passed += 1
    return passed, failed


def hunt(directory: str, runs: int, busy: int, random_order: bool, extra: list[str]) -> list[Run]:
    out = ROOT / "build" / "flake-hunt" / directory.strip("/").replace("/", "-")
    out.mkdir(parents=True, exist_ok=True)
    results = []
    with contention(busy):
        for number in range(1, runs + 1):
            seed = random.randrange(2**32) if random_order else None
            report = out / f"run-{number}.xml"
            order = ["-p", "randomly", f"--randomly-seed={seed}"] if seed is not None else []
            argv = [sys.executable, "-m", "pytest", "-q", *order, f"--junitxml={report}", directory, *extra]
            started = time.monotonic()
            with (out / f"run-{number}.log").open("wb") as log:
                code = subprocess.call(argv, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
            run = Run(number, seed, time.monotonic() - started, code)
            if report.exists():
                run.passed, run.failures = outcome(report)
            elif code != 0:
                run.failures = [f"(session failed before any report, exit {code})"]
            results.append(run)
            status = "ok" if code == 0 else f"FAILED: {', '.join(run.failures) or f'exit {code}'}"
            print(
                f"flake-hunt {directory} run {number}/{runs} seed={seed} "
                f"{run.seconds:.0f}s passed={run.passed} {status}",
                flush=True,
            )
    return results


def summary(directory: str, busy: int, results: list[Run]) -> str:
    failing: dict[str, list[Run]] = {}
    for run in results:
        for test in run.failures:
            failing.setdefault(test, []).append(run)
    total = sum(r.seconds for r in results)
    lines = [
        f"flake-hunt {directory}: {len(results)} runs, {busy} busy process(es), "
        f"{sum(r.exit_code == 0 for r in results)} green, {total / 60:.1f} min",
    ]
    if not failing:
        lines.append("no test failed")
    for test, runs in sorted(failing.items(), key=lambda item: -len(item[1])):
        seeds = ", ".join(f"run {r.number} seed {r.seed}" for r in runs)
        lines.append(f"  {len(runs)}/{len(results)}  {test}  ({seeds})")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hack.flakehunt", description=__doc__.split("\n")[0])
    parser.add_argument("directory", help="the test directory (or file) to run, e.g. e2e/catalogd")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--busy", type=int, default=1, help="busy processes beside the tests (0: none)")
    parser.add_argument("--fixed-order", action="store_true", help="keep pytest's order in every run")
    parser.add_argument("pytest_args", nargs="*", help="more pytest arguments (after --)")
    args = parser.parse_args(argv)
    results = hunt(args.directory, args.runs, args.busy, not args.fixed_order, args.pytest_args)
    print(summary(args.directory, args.busy, results))
    return 0 if all(r.exit_code == 0 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
