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
from typing import Any

import yaml

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
    rename: bool = False
    """Build each package on its own into the binary named at the same position of `binaries`,
    instead of letting go name it after the package's last path element (cert-manager's mains are
    `./controller` and `./cainjector`: names that say nothing beside kube-controller-manager)."""


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
    Target(
        module="certmanager",
        packages=("./controller", "./cainjector"),
        binaries=("cert-manager-controller", "cert-manager-cainjector"),
        rename=True,
    ),
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

CERT_MANAGER_MODULE = "github.com/cert-manager/cert-manager"
# cert-manager ships its CRDs to users through its Helm chart, whose CRD templates are
# controller-gen output wrapped in a few Helm actions (deploy/crds is marked as "might be
# incomplete"). They are rendered from the pinned module's chart by `render_chart_crd`.
CERT_MANAGER_CHART_TEMPLATES = "deploy/charts/cert-manager/templates"
CERT_MANAGER_CRDS = (
    "cert-manager.io_certificates",
    "cert-manager.io_certificaterequests",
    "cert-manager.io_issuers",
    "cert-manager.io_clusterissuers",
    "acme.cert-manager.io_orders",
    "acme.cert-manager.io_challenges",
)
CERT_MANAGER_CRDS_FILE = "cert-manager-crds.yaml"
OUTPUTS = (*BINARIES, "kwok-stages.yaml", CERT_MANAGER_CRDS_FILE)

# Every Helm action the chart's CRD templates contain, and how it is rendered. Rendering is
# `helm template --set crds.enabled=true --set crds.keep=false`, done by hand because these are all
# the actions there are: `if` lines render as true and `end` lines vanish, the `keep` annotation is
# removed afterwards (it only tells Helm not to delete the CRD), and the labels include is replaced
# by `chart_crd_labels`. Any other action fails the build, so a pin bump that templates more of a
# CRD is reviewed instead of rendered wrongly.
CHART_ACTIONS = frozenset(
    {
        "{{- if or .Values.crds.enabled .Values.installCRDs }}",
        "{{- if .Values.crds.keep }}",
        '{{- include "cert-manager.crd-labels" . | nindent 4 }}',
        "{{- end }}",
    }
)
HELM_KEEP_ANNOTATION = "helm.sh/resource-policy"


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


def required_version(wrapper: str, module: str) -> str:
    """The version of `module` that the wrapper module `gomod/<wrapper>` pins."""
    for line in (GOMOD_DIR / wrapper / "go.mod").read_text().splitlines():
        fields = line.replace("require", "").split()
        if len(fields) >= 2 and fields[0] == module:
            return fields[1]
    raise BuildError(f"hack/controlplane/gomod/{wrapper}/go.mod does not require {module}")


def kubernetes_version() -> str:
    return required_version("kubernetes", "k8s.io/kubernetes")


def cert_manager_version() -> str:
    return required_version("certmanager", CERT_MANAGER_MODULE)


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
    """`go build` main packages of a pinned module, statically, into `output`: an existing directory
    (go names each binary), or the binary's own path when one package is built."""
    target = str(output) if len(packages) == 1 and not output.is_dir() else f"{output}/"
    cmd = [go_toolchain(), "build", "-trimpath", "-ldflags=-s -w", "-o", target, *packages]
    env = {**os.environ, "CGO_ENABLED": "0", "GOFLAGS": "-mod=readonly -buildvcs=false"}
    result = subprocess.run(cmd, cwd=module_dir, env=env, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise BuildError(f"go build in {module_dir} failed:\n{result.stderr[-4000:]}")


def _log(message: str) -> None:
    print(f"controlplane-build: {message}", file=sys.stderr, flush=True)


def _module_source(go: str, wrapper: str, module: str) -> Path:
    """The directory of the pinned `module`'s source in the module cache (downloaded by the build)."""
    result = subprocess.run(
        [go, "list", "-m", "-f", "{{.Dir}}", module],
        cwd=GOMOD_DIR / wrapper,
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0 or not result.stdout.strip():
        raise BuildError(f"cannot locate the {module} module source: {result.stderr.strip()}")
    return Path(result.stdout.strip())


def _write_kwok_stages(go: str, destination: Path) -> None:
    module_dir = _module_source(go, "kwok", "sigs.k8s.io/kwok")
    documents = [(module_dir / stage).read_text().strip() for stage in KWOK_STAGES]
    destination.write_text("\n---\n".join(documents) + "\n")


def chart_crd_labels(version: str) -> dict[str, str]:
    """The labels the chart's `cert-manager.crd-labels` helper gives a CRD, for a release named
    cert-manager; the labels naming Helm itself (managed-by, helm.sh/chart) are left out."""
    return {
        "app": "cert-manager",
        "app.kubernetes.io/name": "cert-manager",
        "app.kubernetes.io/instance": "cert-manager",
        "app.kubernetes.io/component": "crds",
        "app.kubernetes.io/version": version,
    }


def render_chart_crd(template: str, *, labels: dict[str, str], source: str) -> dict[str, Any]:
    """Render one of cert-manager's chart CRD templates (see CHART_ACTIONS) into a CRD object."""
    kept = []
    for number, line in enumerate(template.splitlines(), start=1):
        if "{{" not in line:
            kept.append(line)
            continue
        if line.strip() not in CHART_ACTIONS:
            raise BuildError(f"{source}:{number}: unexpected Helm template action: {line.strip()}")
    crd = yaml.safe_load("\n".join(kept))
    if not isinstance(crd, dict) or crd.get("kind") != "CustomResourceDefinition":
        raise BuildError(f"{source} does not render to a CustomResourceDefinition")
    metadata = crd["metadata"]
    annotations = metadata.pop("annotations", None) or {}
    annotations.pop(HELM_KEEP_ANNOTATION, None)
    if annotations:
        metadata["annotations"] = annotations
    metadata["labels"] = dict(labels)
    return crd


def _write_cert_manager_crds(go: str, destination: Path) -> None:
    chart = _module_source(go, "certmanager", CERT_MANAGER_MODULE) / CERT_MANAGER_CHART_TEMPLATES
    labels = chart_crd_labels(cert_manager_version())
    crds = [
        render_chart_crd((chart / f"crd-{name}.yaml").read_text(), labels=labels, source=f"crd-{name}.yaml")
        for name in CERT_MANAGER_CRDS
    ]
    destination.write_text(yaml.safe_dump_all(crds, sort_keys=False))


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
            if target.rename:
                for package, name in zip(target.packages, target.binaries, strict=True):
                    go_build(GOMOD_DIR / target.module, (package,), staging / name)
            else:
                # The module directory is named after the wrapper, not the binary: name "." explicitly.
                output = staging / target.binaries[0] if target.packages == (".",) else staging
                go_build(GOMOD_DIR / target.module, target.packages, output)
            _log(f"built {', '.join(names)} in {time.monotonic() - t0:.1f}s")
        _write_kwok_stages(go, staging / "kwok-stages.yaml")
        _write_cert_manager_crds(go, staging / CERT_MANAGER_CRDS_FILE)
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
