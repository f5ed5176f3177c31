"""Upstream OLM v1 (Go) built on this machine, as the peer of `make bench-upstream`.

Everything upstream's catalogd and operator-controller v1.11.0 need comes from the Go module proxy
except `pkg.package-operator.run/boxcutter` v0.14.0, which the proxy refuses. The environment
variable `OLMPY_UPSTREAM_BOXCUTTER` names a directory holding that module's source (its public
repository checked out at tag v0.14.0); without it there is no peer and the benchmark runs ours
alone. The build happens in a module of our own under the cache directory that requires upstream
at that version, points boxcutter at the given directory with a `replace`, and starts from
upstream's own `go.sum` (the checksum database does not know one of upstream's pseudo-versions).
Binaries are cached per version and per boxcutter source, so only the first run pays the build.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

UPSTREAM_MODULE = "github.com/operator-framework/operator-controller"
UPSTREAM_VERSION = "v1.11.0"
BOXCUTTER_MODULE = "pkg.package-operator.run/boxcutter"
BOXCUTTER_ENV = "OLMPY_UPSTREAM_BOXCUTTER"
BUILD_TAGS = "containers_image_openpgp"
COMMANDS = ("catalogd", "operator-controller")
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "olm-py" / "upstream"
MANIFEST = "manifests/experimental.yaml"
"""Upstream's rendered install manifest with the ClusterObjectSet CRD (BoxcutterRuntime)."""


class PeerUnavailable(Exception):
    """No peer can be built here; the message says why."""


@dataclass(frozen=True)
class Peer:
    binaries: Path
    source: Path
    """Upstream's module source (read-only, from the module cache): its manifests and CRDs."""

    def binary(self, command: str) -> Path:
        return self.binaries / command

    def crds(self) -> list[dict[str, Any]]:
        documents = yaml.safe_load_all((self.source / MANIFEST).read_text())
        return [doc for doc in documents if doc and doc.get("kind") == "CustomResourceDefinition"]


def _go(args: list[str], cwd: Path, log: Path) -> str:
    env = {**os.environ, "GOFLAGS": "-mod=mod", "GOTOOLCHAIN": "local", "CGO_ENABLED": "0"}
    result = subprocess.run(["go", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False)
    with log.open("a") as out:
        out.write(f"$ go {' '.join(args)}\n{result.stdout}{result.stderr}\n")
    if result.returncode != 0:
        raise PeerUnavailable(f"`go {' '.join(args[:2])}` failed (log: {log}):\n{result.stderr[-2000:]}")
    return result.stdout


def _boxcutter_source() -> Path:
    value = os.environ.get(BOXCUTTER_ENV)
    if not value:
        raise PeerUnavailable(
            f"{BOXCUTTER_ENV} is unset: it names a checkout of {BOXCUTTER_MODULE} at v0.14.0, "
            "which the Go module proxy does not serve"
        )
    source = Path(value).resolve()
    go_mod = source / "go.mod"
    if not go_mod.is_file() or f"module {BOXCUTTER_MODULE}\n" not in go_mod.read_text():
        raise PeerUnavailable(
            f"{BOXCUTTER_ENV}={value} holds no {BOXCUTTER_MODULE} module (no matching go.mod)"
        )
    return source


def _fingerprint(boxcutter: Path) -> str:
    digest = hashlib.sha256(UPSTREAM_VERSION.encode())
    for path in [*sorted(boxcutter.rglob("*.go")), boxcutter / "go.mod"]:
        digest.update(str(path.relative_to(boxcutter)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def build() -> Peer:
    """Upstream's binaries, built on first use; raises `PeerUnavailable` when that cannot be."""
    boxcutter = _boxcutter_source()
    if shutil.which("go") is None:
        raise PeerUnavailable("no Go toolchain on PATH")
    work = CACHE / f"{UPSTREAM_VERSION}-{_fingerprint(boxcutter)}"
    binaries = work / "bin"
    module = work / "module"
    module.mkdir(parents=True, exist_ok=True)
    log = work / "build.log"
    (module / "go.mod").write_text(
        f"module olm-py.local/upstream-peer\n\ngo 1.26\n\nreplace {BOXCUTTER_MODULE} => {boxcutter}\n"
    )
    info = json.loads(_go(["mod", "download", "-json", f"{UPSTREAM_MODULE}@{UPSTREAM_VERSION}"], module, log))
    source = Path(info["Dir"])
    if all((binaries / command).is_file() for command in COMMANDS):
        return Peer(binaries, source)
    (module / "go.sum").write_bytes((source / "go.sum").read_bytes())
    packages = [f"{UPSTREAM_MODULE}/cmd/{command}" for command in COMMANDS]
    _go(["get", *(f"{package}@{UPSTREAM_VERSION}" for package in packages)], module, log)
    staging = work / "bin.staging"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    _go(["build", "-tags", BUILD_TAGS, "-trimpath", "-o", f"{staging}/", *packages], module, log)
    shutil.rmtree(binaries, ignore_errors=True)
    staging.rename(binaries)
    return Peer(binaries, source)
