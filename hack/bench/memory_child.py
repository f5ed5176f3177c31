"""Runs a module (`-m name args...`) under tracemalloc and writes a snapshot on SIGUSR1.

`make bench-memory` starts operator-controller through this (`python -X tracemalloc=N
hack/bench/memory_child.py -m olm.operator_controller.main ...`). Each SIGUSR1 collects garbage,
takes a snapshot, writes it to `$BENCH_MEMORY_DIR/snapshot-<k>.pickle` and then appends a line to
`$BENCH_MEMORY_DIR/snapshots`, which the driver polls: the line says the file is complete.

Standalone on purpose (run by path, standard library only): nothing here may allocate inside the
process it measures beyond the snapshot itself.
"""

from __future__ import annotations

import gc
import os
import runpy
import signal
import sys
import tracemalloc
from pathlib import Path
from types import FrameType


def _snapshot(_signum: int, _frame: FrameType | None) -> None:
    directory = Path(os.environ["BENCH_MEMORY_DIR"])
    done = directory / "snapshots"
    taken = len(done.read_text().splitlines()) if done.exists() else 0
    gc.collect()
    path = directory / f"snapshot-{taken}.pickle"
    tracemalloc.take_snapshot().dump(str(path))
    with done.open("a") as f:
        f.write(f"{path.name}\n")


def main() -> None:
    if not tracemalloc.is_tracing():
        sys.exit("run with -X tracemalloc=<frames>")
    if len(sys.argv) < 3 or sys.argv[1] != "-m":
        sys.exit("usage: memory_child.py -m module [args...]")
    module = sys.argv[2]
    sys.argv = [module, *sys.argv[3:]]
    signal.signal(signal.SIGUSR1, _snapshot)
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
