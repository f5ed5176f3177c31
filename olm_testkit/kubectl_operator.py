"""Upstream's CLI, `kubectl operator olmv1` (operator-framework/kubectl-operator), built here and run
as users run it, to prove that what works against upstream OLM v1 works against ours.

The Go module proxy refuses the versions that have the `olmv1` catalog and extension commands, so
the environment variable `OLMPY_KUBECTL_OPERATOR` names a directory holding the repository's source
(a checkout of its newest commit). Without it there is no peer: the tests that need it are skipped
with the reason, as `make bench-upstream` runs without its boxcutter source; a variable that names
anything else, or a build that fails, is an error. The build copies the
source under the cache directory (the checkout stays untouched) and is cached per source
fingerprint, so only the first run pays for it (about 2.5 minutes on 2 cores).
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from olm_testkit import cachedir

MODULE = "github.com/operator-framework/kubectl-operator"
SOURCE_ENV = "OLMPY_KUBECTL_OPERATOR"


class BuildFailed(Exception):
    """The named source is not the CLI's, or it does not build; the message says why."""


@dataclass(frozen=True)
class Result:
    code: int
    out: str
    err: str


@dataclass(frozen=True)
class KubectlOperator:
    """Runs the built plugin (`kubectl-operator`) against one cluster's kubeconfig."""

    binary: Path
    kubeconfig: Path

    async def __call__(self, *argv: str, timeout: float = 300) -> Result:
        process = await asyncio.create_subprocess_exec(
            str(self.binary),
            *argv,
            env={**os.environ, "KUBECONFIG": str(self.kubeconfig)},
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            out, err = await asyncio.wait_for(process.communicate(), timeout)
        except TimeoutError:
            process.kill()
            await process.wait()
            raise AssertionError(f"kubectl operator {' '.join(argv)} ran longer than {timeout} s") from None
        result = Result(process.returncode or 0, out.decode(), err.decode())
        print(f"$ kubectl operator {' '.join(argv)}  # exit {result.code}\n{result.out}{result.err}")
        return result


UNSET = (
    f"peer unavailable: {SOURCE_ENV} is unset; it names a checkout of {MODULE} "
    "(the Go module proxy does not serve the versions with the olmv1 commands)"
)
"""Why the tests that run the CLI are skipped where no source is given."""


def source() -> Path | None:
    """The checkout `OLMPY_KUBECTL_OPERATOR` names, None when unset; `BuildFailed` when it names
    something else."""
    value = os.environ.get(SOURCE_ENV)
    if not value:
        return None
    checkout = Path(value).resolve()
    go_mod = checkout / "go.mod"
    if not go_mod.is_file() or f"module {MODULE}\n" not in go_mod.read_text():
        raise BuildFailed(f"{SOURCE_ENV}={value} holds no {MODULE} module (no matching go.mod)")
    return checkout


def _fingerprint(checkout: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted([*checkout.rglob("*.go"), checkout / "go.mod", checkout / "go.sum"]):
        digest.update(str(path.relative_to(checkout)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def build(checkout: Path) -> Path:
    """The plugin's binary, built from `checkout` on first use; raises `BuildFailed`."""
    if shutil.which("go") is None:
        raise BuildFailed("no Go toolchain on PATH")
    work = cachedir.root() / "kubectl-operator" / _fingerprint(checkout)
    binary = work / "kubectl-operator"
    if binary.is_file():
        return binary
    module = work / "src"
    shutil.rmtree(module, ignore_errors=True)
    shutil.copytree(checkout, module, ignore=shutil.ignore_patterns(".git"))
    env = {**os.environ, "GOFLAGS": "-mod=mod", "GOTOOLCHAIN": "local", "CGO_ENABLED": "0"}
    staging = work / "kubectl-operator.staging"
    built = subprocess.run(
        ["go", "build", "-trimpath", "-o", str(staging), "."],
        cwd=module,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if built.returncode != 0:
        raise BuildFailed(f"`go build` of {MODULE} failed:\n{built.stderr[-2000:]}")
    staging.rename(binary)
    shutil.rmtree(module)
    return binary
