"""olmctl as users run it: a subprocess (`python -m olm.cli.main`) against the session's cluster,
its output captured and printed (run pytest with `-s` to see every command, as the docs show)."""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

REPO_ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Result:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return orjson.loads(self.out)


@dataclass(frozen=True)
class Olmctl:
    """Runs `python -m olm.cli.main` with the session's kubeconfig and the control plane's CA."""

    kubeconfig: Path
    ca_file: Path

    async def __call__(self, *argv: str) -> Result:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "olm.cli.main",
            "--kubeconfig",
            str(self.kubeconfig),
            "--catalogd-ca",
            str(self.ca_file),
            *argv,
            cwd=REPO_ROOT,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await process.communicate()
        result = Result(process.returncode or 0, out.decode(), err.decode())
        print(f"$ olmctl {' '.join(argv)}  # exit {result.code}\n{result.out}{result.err}")
        return result
