"""One fuzz target under atheris (libFuzzer), as the runner's child process.

    python -m hack.fuzz._run TARGET CRASH_DIR [libFuzzer flags] CORPUS_DIR

The project's code (`olm`) is imported with atheris' coverage instrumentation, so libFuzzer keeps
the inputs that reach new branches. A target's exception is a finding: it is saved once per
signature (exception type and the innermost frame of the project) as `<signature>.bin` with the
traceback beside it in `<signature>.txt`, and fuzzing goes on, so one run counts every distinct
finding and reaches its whole budget. Crashes of the interpreter itself, timeouts and memory
blow-ups are libFuzzer's to catch: it writes them under CRASH_DIR too, and stops.
"""

from __future__ import annotations

import hashlib
import importlib
import sys
import traceback
from collections.abc import Callable
from pathlib import Path

import atheris
from atheris.import_hook import instrument_imports


def _signature(error: BaseException) -> str:
    frames = traceback.extract_tb(error.__traceback__)
    ours = [f for f in frames if "/olm/" in f.filename or "/hack/" in f.filename] or frames
    where = f"{ours[-1].filename.rsplit('/', 2)[-2:]}:{ours[-1].lineno}" if ours else "?"
    return hashlib.sha256(f"{type(error).__name__} {where}".encode()).hexdigest()[:16]


def _recording(one_input: Callable[[bytes], None], crashes: Path) -> Callable[[bytes], None]:
    def test_one_input(data: bytes) -> None:
        try:
            one_input(data)
        except Exception as error:
            path = crashes / f"{_signature(error)}.bin"
            if not path.exists():
                path.write_bytes(data)
                text = "".join(traceback.format_exception(error))
                path.with_suffix(".txt").write_text(text)
                print(f"NEW FINDING {path}\n{text}", file=sys.stderr, flush=True)

    return test_one_input


def main() -> None:
    target, crashes, flags = sys.argv[1], Path(sys.argv[2]), sys.argv[3:]
    crashes.mkdir(parents=True, exist_ok=True)
    with instrument_imports(include=["olm"]):
        module = importlib.import_module(f"hack.fuzz.{target}")
    atheris.Setup([sys.argv[0], *flags], _recording(module.one_input, crashes))
    atheris.Fuzz()


if __name__ == "__main__":
    main()
