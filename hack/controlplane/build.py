"""Build the control-plane binaries from the pinned Go wrapper modules, once per pin.

Each directory under `gomod/` is a Go module whose `go.mod` pins one upstream release. The binaries
land in `~/.cache/olm-py/bin/<key>/`, where the key is a digest of every wrapper module's files, so
they are rebuilt only when a pin changes. A build goes to a temporary directory that is renamed into
place when complete: an interrupted build never leaves a half-filled cache entry behind.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

GOMOD_DIR = Path(__file__).resolve().parent / "gomod"


@dataclass(frozen=True, kw_only=True)
class Target:
    """One wrapper module and the main packages built from it."""

    module: str
    """Directory name under `gomod/`."""
    packages: tuple[str, ...]
    """Main packages (import paths, or "." for the module's own); go names each binary."""
    binaries: tuple[str, ...]
    """The binaries this target produces, for the log and the completeness check."""


TARGETS = (
    Target(module="etcd", packages=(".",), binaries=("etcd",)),
    Target(
        module="kubernetes",
        packages=(
            "k8s.io/kubernetes/cmd/kube-apiserver",
            "k8s.io/kubernetes/cmd/kube-controller-manager",
            "k8s.io/kubernetes/cmd/kube-scheduler",
        ),
        binaries=("kube-apiserver", "kube-controller-manager", "kube-scheduler"),
    ),
    Target(module="kwok", packages=("sigs.k8s.io/kwok/cmd/kwok",), binaries=("kwok",)),
)


class BuildError(RuntimeError):
    """The binaries could not be built; the message says what to install or what failed."""


BINARIES = tuple(name for target in TARGETS for name in target.binaries)

# kwok simulates nothing without Stage configuration. These are the stages kwok's own release
# ships as its fast defaults (nodes become Ready and keep their lease; pods become Ready, complete
# and go away); they are read from the pinned kwok module's source, not copied into this repository.
KWOK_STAGES = (
    "kustomize/stage/node/fast/node-initialize.yaml",
    "kustomize/stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml",
    "kustomize/stage/pod/fast/pod-ready.yaml",
    "kustomize/stage/pod/fast/pod-complete.yaml",
    "kustomize/stage/pod/fast/pod-delete.yaml",
)
OUTPUTS = (*BINARIES, "kwok-stages.yaml")


def cache_root() -> Path:
    base = os.environ.get("OLMPY_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "olm-py"
    )
    return Path(base) / "bin"


def pin_key(root: Path = GOMOD_DIR) -> str:
    """A digest of every file under `root` (wrapper modules): it changes exactly when a pin changes."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if path.is_file():
            digest.update(str(path.relative_to(root)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def kubernetes_version() -> str:
    for line in (GOMOD_DIR / "kubernetes" / "go.mod").read_text().splitlines():
        fields = line.replace("require", "").split()
        if len(fields) >= 2 and fields[0] == "k8s.io/kubernetes":
            return fields[1]
    raise BuildError("hack/controlplane/gomod/kubernetes/go.mod does not require k8s.io/kubernetes")


def binary_dir() -> Path:
    return cache_root() / f"{kubernetes_version()}-{pin_key()}"


def go_toolchain() -> str:
    go = shutil.which("go")
    if go is None:
        raise BuildError(
            "the Go toolchain is not on PATH: install Go >= 1.26 (it builds the pinned control plane)"
        )
    return go


def go_build(module_dir: Path, packages: tuple[str, ...], output: Path) -> None:
    """`go build` main packages of a pinned module, statically, into `output` (a directory, or a
    file path when the one package is the module's own, ".")."""
    target = str(output) if packages == (".",) else f"{output}/"
    cmd = [go_toolchain(), "build", "-trimpath", "-ldflags=-s -w", "-o", target, *packages]
    env = {**os.environ, "CGO_ENABLED": "0", "GOFLAGS": "-mod=readonly -buildvcs=false"}
    result = subprocess.run(cmd, cwd=module_dir, env=env, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise BuildError(f"go build in {module_dir} failed:\n{result.stderr[-4000:]}")


def _log(message: str) -> None:
    print(f"controlplane-build: {message}", file=sys.stderr, flush=True)


def _write_kwok_stages(go: str, destination: Path) -> None:
    result = subprocess.run(
        [go, "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/kwok"],
        cwd=GOMOD_DIR / "kwok",
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise BuildError(f"cannot locate the kwok module source: {result.stderr.strip()}")
    module_dir = Path(result.stdout.strip())
    documents = [(module_dir / stage).read_text().strip() for stage in KWOK_STAGES]
    destination.write_text("\n---\n".join(documents) + "\n")


def ensure_binaries() -> Path:
    """Return the directory holding every binary of BINARIES, building it first if absent."""
    target_dir = binary_dir()
    if all((target_dir / name).is_file() for name in OUTPUTS):
        return target_dir
    go = go_toolchain()
    target_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".build-", dir=target_dir.parent))
    started = time.monotonic()
    try:
        for target in TARGETS:
            names = target.binaries
            _log(f"building {', '.join(names)} from gomod/{target.module}")
            t0 = time.monotonic()
            # The module directory is named after the wrapper, not the binary: name "." explicitly.
            output = staging / target.binaries[0] if target.packages == (".",) else staging
            go_build(GOMOD_DIR / target.module, target.packages, output)
            _log(f"built {', '.join(names)} in {time.monotonic() - t0:.1f}s")
        _write_kwok_stages(go, staging / "kwok-stages.yaml")
        if target_dir.exists():
            shutil.rmtree(target_dir)
        staging.rename(target_dir)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    _log(f"all binaries built in {time.monotonic() - started:.1f}s into {target_dir}")
    return target_dir


if __name__ == "__main__":
    try:
        print(ensure_binaries())
    except BuildError as err:
        print(f"error: {err}", file=sys.stderr)
        sys.exit(1)
