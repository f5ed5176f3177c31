"""The Python environment the image ships, for benchmarks that run our processes on the host.

The image installs the locked runtime dependencies only (no dev or bench group) and byte-compiles
them. The development virtualenv has more: structlog, for one, renders exceptions with `rich` when
it finds it installed, which adds about 4 MiB to each process. A benchmark that compares memory with
a peer therefore runs ours with this environment's interpreter, as users run it. The processes
start with `python -m` from the repository root, so `olm` and `olm_runtime` come from the checkout:
the virtualenv holds only the dependencies (`--no-install-workspace`), and no wheel of ours is
built for it.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
VENV = REPO_ROOT / "build" / "bench" / "shipped-venv"


@functools.cache
def shipped_python() -> str:
    """The interpreter of a virtualenv with the image's third-party packages, synced from `uv.lock`
    once per run."""
    uv = shutil.which("uv")
    if uv is None:
        raise RuntimeError("uv is not on PATH (hack/install-deps.sh installs it)")
    env = {
        **os.environ,
        "UV_PROJECT_ENVIRONMENT": str(VENV),
        "UV_COMPILE_BYTECODE": "1",
        "UV_PYTHON_DOWNLOADS": "never",
    }
    env.pop("VIRTUAL_ENV", None)
    subprocess.run(
        [uv, "sync", "--frozen", "--no-dev", "--no-default-groups", "--no-install-workspace", "--quiet"],
        cwd=REPO_ROOT,
        env=env,
        check=True,
    )
    return str(VENV / "bin" / "python")
