"""Run the fuzz targets for a fixed budget and print what each did (`make fuzz`).

    uv run --frozen --group fuzz python -m hack.fuzz [--runs N] [--jobs J] [--target T ...]

Per target: executions, findings (distinct crashes, timeouts, memory blow-ups), executions per
second and the corpus size. The corpus is kept under `build/fuzz/corpus/<target>/` (seeded from
the target's `SEEDS` on first use) so later runs start where earlier ones stopped; findings go to
`build/fuzz/crashes/<target>/`. libFuzzer's own output is passed through on stderr. The exit
status is 1 when a run found something new.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from hack.fuzz import TARGETS

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "build" / "fuzz"
MAX_LEN = {
    "semver_ranges": 512,
    "fbc_streams": 8192,
    "image_layers": 2048,
    "registryv1": 16384,
    "secret_packing": 1024,
}
"""Largest input per target: room for the seeds, small enough to keep executions fast."""
TIMEOUT_SECONDS = 30
RSS_LIMIT_MB = 2048
_EXECUTED = re.compile(r"^stat::number_of_executed_units:\s*(\d+)")
_PROGRESS = re.compile(r"^#(\d+)\s")


@dataclass(frozen=True)
class Outcome:
    target: str
    executions: int
    findings: int
    seconds: float
    corpus_files: int
    corpus_bytes: int
    exit_code: int

    @property
    def per_second(self) -> float:
        return self.executions / self.seconds if self.seconds > 0 else 0.0


def _seed(target: str, corpus: Path) -> None:
    corpus.mkdir(parents=True, exist_ok=True)
    if any(corpus.iterdir()):
        return
    for seed in importlib.import_module(f"hack.fuzz.{target}").SEEDS:
        (corpus / f"seed-{hashlib.sha256(seed).hexdigest()[:16]}").write_bytes(seed)


def _ram_disk() -> str | None:
    return "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None


def _findings(crashes: Path) -> set[str]:
    if not crashes.is_dir():
        return set()
    return {p.name for p in crashes.iterdir() if p.suffix != ".txt"}


def fuzz(target: str, runs: int, jobs: int = 1) -> Outcome:
    """Fuzz `target` for `runs` executions in all, split over `jobs` processes that share the
    corpus (libFuzzer reloads it as the others add to it)."""
    corpus, crashes = BUILD / "corpus" / target, BUILD / "crashes" / target
    _seed(target, corpus)
    before = _findings(crashes)
    share = -(-runs // jobs)
    command = [
        sys.executable,
        "-m",
        "hack.fuzz._run",
        target,
        str(crashes),
        f"-runs={share}",
        f"-max_len={MAX_LEN[target]}",
        f"-timeout={TIMEOUT_SECONDS}",
        f"-rss_limit_mb={RSS_LIMIT_MB}",
        f"-artifact_prefix={crashes}/",
        "-print_final_stats=1",
        str(corpus),
    ]
    executions = [0] * jobs
    exit_codes = [0] * jobs
    started = time.monotonic()
    # Targets that write files do so under TMPDIR: a RAM disk where there is one, removed after.
    with tempfile.TemporaryDirectory(prefix=f"fuzz-{target}-", dir=_ram_disk()) as scratch:
        environment = {**os.environ, "TMPDIR": scratch}

        def job(index: int) -> None:
            with subprocess.Popen(
                command, cwd=ROOT, env=environment, stderr=subprocess.PIPE, text=True, errors="replace"
            ) as child:
                assert child.stderr is not None
                for line in child.stderr:
                    sys.stderr.write(f"[{target} {index}] {line}" if jobs > 1 else line)
                    if match := _EXECUTED.match(line) or _PROGRESS.match(line):
                        executions[index] = max(executions[index], int(match.group(1)))
            exit_codes[index] = child.returncode

        threads = [threading.Thread(target=job, args=(index,)) for index in range(jobs)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    seconds = time.monotonic() - started
    files = [p for p in corpus.iterdir() if p.is_file()]
    return Outcome(
        target=target,
        executions=sum(executions),
        findings=len(_findings(crashes) - before),
        seconds=seconds,
        corpus_files=len(files),
        corpus_bytes=sum(p.stat().st_size for p in files),
        exit_code=max(exit_codes, key=abs),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hack.fuzz", description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=100_000, help="executions per target")
    parser.add_argument(
        "--target", action="append", choices=TARGETS, help="a target (repeatable); all by default"
    )
    parser.add_argument("--jobs", type=int, default=1, help="processes per target, sharing its corpus")
    args = parser.parse_args(argv)
    outcomes = [fuzz(target, args.runs, args.jobs) for target in args.target or TARGETS]
    print(f"{'target':<16} {'executions':>11} {'new findings':>12} {'exec/s':>8} {'corpus':>18}  exit")
    for o in outcomes:
        corpus = f"{o.corpus_files} files/{o.corpus_bytes // 1024} KiB"
        figures = f"{o.executions:>11} {o.findings:>12} {o.per_second:>8.0f} {corpus:>18}"
        print(f"{o.target:<16} {figures}  {o.exit_code}")
    print(f"findings are under {BUILD / 'crashes'}")
    return 1 if any(o.findings or o.exit_code for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
