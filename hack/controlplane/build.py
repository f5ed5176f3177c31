"""Build the control-plane and node binaries from the pinned Go wrapper modules, once per pin.

Each directory under `gomod/` is a Go module whose `go.mod` pins one upstream release (`pause` is a
program of this repository's own). Each Target is built into `~/.cache/olm-py/bin/targets/
<module>-<key>/`, where the key is a digest of that wrapper module's files and of how it is built,
so changing one pin rebuilds only that target. `binary_dir()` is one directory,
`~/.cache/olm-py/bin/<kubernetes release>-<combined key>/`, of hard links to every target's outputs
(every binary, `kwok-stages.yaml`, `cert-manager-crds.yaml`): the rest of the repository uses that
single directory. Builds and assemblies go to a temporary directory that is renamed into place when
complete: an interrupted build never leaves a half-filled cache entry behind.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
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
    assets: tuple[str, ...] = ()
    """Files besides the binaries, taken from the pinned module's source (see `_write_asset`)."""
    tags: tuple[str, ...] = field(default=(), repr=False)
    """Go build tags (promtool's `remove_all_sd` leaves out the cloud service-discovery SDKs, which
    rule checks never use and which were most of its cold build)."""
    stamp_kubernetes_version: bool = False
    """Link the pinned release into the version the binaries report: a plain `go build` of
    k8s.io/kubernetes reports v0.0.0-master, which a Node's kubeletVersion and /version would show."""

    @property
    def outputs(self) -> tuple[str, ...]:
        return (*self.binaries, *self.assets)


KWOK_STAGES_FILE = "kwok-stages.yaml"
CERT_MANAGER_CRDS_FILE = "cert-manager-crds.yaml"

TARGETS = (
    Target(module="etcd", packages=(".",), binaries=("etcd",)),
    Target(
        module="kubernetes",
        packages=(
            "k8s.io/kubernetes/cmd/kube-apiserver",
            "k8s.io/kubernetes/cmd/kube-controller-manager",
            "k8s.io/kubernetes/cmd/kube-scheduler",
            "k8s.io/kubernetes/cmd/kubelet",
            "k8s.io/kubernetes/cmd/kube-proxy",
        ),
        binaries=("kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet", "kube-proxy"),
        stamp_kubernetes_version=True,
    ),
    Target(
        module="kwok", packages=("sigs.k8s.io/kwok/cmd/kwok",), binaries=("kwok",), assets=(KWOK_STAGES_FILE,)
    ),
    Target(
        module="certmanager",
        packages=("./controller", "./cainjector"),
        binaries=("cert-manager-controller", "cert-manager-cainjector"),
        rename=True,
        assets=(CERT_MANAGER_CRDS_FILE,),
    ),
    Target(module="coredns", packages=(".",), binaries=("coredns",)),
    Target(module="pause", packages=(".",), binaries=("pause",)),
    # An OpenTelemetry Collector (OTLP receiver, file exporter) that the tracing tests export to.
    Target(module="otelcol", packages=(".",), binaries=("otelcol",)),
    # promtool checks and unit-tests the alerting rules of manifests/monitoring.
    Target(
        module="promtool",
        packages=("github.com/prometheus/prometheus/cmd/promtool",),
        binaries=("promtool",),
        tags=("remove_all_sd",),
    ),
)

BUILD_RECIPE = "2"
"""Part of every target's key: bump it when the way `go_build` builds changes (flags,
environment), since that is not in the wrapper modules' files."""


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
OUTPUTS = tuple(name for target in TARGETS for name in target.outputs)

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


def pin_key(root: Path) -> str:
    """A digest of every file under `root` (a wrapper module): it changes exactly when a pin changes."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if path.is_file():
            digest.update(str(path.relative_to(root)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def target_key(target: Target, root: Path = GOMOD_DIR) -> str:
    """The key of one target's cache entry: its own wrapper module's files and how it is built."""
    recipe = f"{BUILD_RECIPE}\0{target!r}\0{pin_key(root / target.module)}"
    if target.tags:  # kept out of the repr so that adding the field left the other targets' keys alone
        recipe += f"\0tags={','.join(target.tags)}"
    return hashlib.sha256(recipe.encode()).hexdigest()[:16]


def target_keys(targets: Iterable[Target] = TARGETS, root: Path = GOMOD_DIR) -> dict[str, str]:
    return {target.module: target_key(target, root) for target in targets}


def combined_key(keys: Mapping[str, str]) -> str:
    """The key of the assembled directory: it changes when any target's key does."""
    digest = hashlib.sha256("".join(f"{module}={keys[module]}\n" for module in sorted(keys)).encode())
    return digest.hexdigest()[:16]


def target_dir(module: str, key: str) -> Path:
    return cache_root() / "targets" / f"{module}-{key}"


def assembly_plan(targets: Iterable[Target], directories: Mapping[str, Path]) -> dict[str, Path]:
    """Which file of which target directory each name of the assembled directory links to."""
    plan: dict[str, Path] = {}
    for target in targets:
        for name in target.outputs:
            if name in plan:
                raise BuildError(f"two targets produce {name}")
            plan[name] = directories[target.module] / name
    return plan


def kubernetes_version_ldflags(version: str) -> tuple[str, ...]:
    """The `-X` flags Kubernetes' own release build sets, so the binaries report `version`: the
    client-go copy is what the kubectl-style `--version` of some commands reads."""
    major, minor = version.removeprefix("v").split(".")[:2]
    values = {"gitVersion": version, "gitMajor": major, "gitMinor": minor, "gitTreeState": "clean"}
    return tuple(
        f"-X {package}.{name}={value}"
        for package in ("k8s.io/component-base/version", "k8s.io/client-go/pkg/version")
        for name, value in values.items()
    )


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
    """The assembled directory of every output; it may not exist yet (see `ensure_binaries`)."""
    return cache_root() / f"{kubernetes_version()}-{combined_key(target_keys())}"


def go_toolchain() -> str:
    go = shutil.which("go")
    if go is None:
        raise BuildError(
            "the Go toolchain is not on PATH: install Go >= 1.26 (it builds the pinned control plane)"
        )
    return go


def go_build(
    module_dir: Path,
    packages: tuple[str, ...],
    output: Path,
    *,
    ldflags: tuple[str, ...] = (),
    tags: tuple[str, ...] = (),
) -> None:
    """`go build` main packages of a pinned module, statically, into `output`: an existing directory
    (go names each binary), or the binary's own path when one package is built."""
    target = str(output) if len(packages) == 1 and not output.is_dir() else f"{output}/"
    flags = " ".join(("-s -w", *ldflags))
    cmd = [go_toolchain(), "build", "-trimpath", f"-ldflags={flags}", "-o", target]
    if tags:
        cmd.append(f"-tags={','.join(tags)}")
    cmd.extend(packages)
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


def _write_asset(go: str, name: str, destination: Path) -> None:
    if name == KWOK_STAGES_FILE:
        _write_kwok_stages(go, destination)
    elif name == CERT_MANAGER_CRDS_FILE:
        _write_cert_manager_crds(go, destination)
    else:
        raise BuildError(f"no writer for the asset {name}")


def _complete(directory: Path, names: Iterable[str]) -> bool:
    return all((directory / name).is_file() for name in names)


def _place(staging: Path, destination: Path, names: tuple[str, ...]) -> None:
    """Rename a complete `staging` directory to `destination`, unless another build placed a
    complete one first (then that one is kept and `staging` dropped)."""
    if destination.exists() and not _complete(destination, names):
        shutil.rmtree(destination)
    try:
        staging.rename(destination)
    except OSError:
        if not _complete(destination, names):
            raise


def _build_target(go: str, target: Target, destination: Path) -> None:
    _log(f"building {', '.join(target.binaries)} from gomod/{target.module}")
    started = time.monotonic()
    module_dir = GOMOD_DIR / target.module
    ldflags = kubernetes_version_ldflags(kubernetes_version()) if target.stamp_kubernetes_version else ()
    staging = Path(tempfile.mkdtemp(prefix=".build-", dir=destination.parent))
    try:
        if target.rename:
            for package, name in zip(target.packages, target.binaries, strict=True):
                go_build(module_dir, (package,), staging / name, ldflags=ldflags, tags=target.tags)
        else:
            # The module directory is named after the wrapper, not the binary: name "." explicitly.
            output = staging / target.binaries[0] if target.packages == (".",) else staging
            go_build(module_dir, target.packages, output, ldflags=ldflags, tags=target.tags)
        for name in target.assets:
            _write_asset(go, name, staging / name)
        _place(staging, destination, target.outputs)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    _log(f"built {', '.join(target.binaries)} in {time.monotonic() - started:.1f}s")


def _link(source: Path, destination: Path) -> None:
    # Hard links keep the assembled directory usable even if a target directory is pruned, and
    # cost no space; a copy is the fallback where the file system refuses links.
    try:
        os.link(source, destination)
    except OSError:
        shutil.copy2(source, destination)


def assemble(plan: Mapping[str, Path], destination: Path) -> None:
    """Make `destination` hold every file of `plan` under its name."""
    destination.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".assemble-", dir=destination.parent))
    try:
        for name, source in plan.items():
            _link(source, staging / name)
        _place(staging, destination, tuple(plan))
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)


def ensure_binaries() -> Path:
    """Return the directory holding every output of OUTPUTS, building the stale targets first."""
    keys = target_keys()
    assembled = cache_root() / f"{kubernetes_version()}-{combined_key(keys)}"
    if _complete(assembled, OUTPUTS):
        return assembled
    directories = {target.module: target_dir(target.module, keys[target.module]) for target in TARGETS}
    stale = [target for target in TARGETS if not _complete(directories[target.module], target.outputs)]
    started = time.monotonic()
    if stale:
        go = go_toolchain()
        for target in stale:
            directory = directories[target.module]
            directory.parent.mkdir(parents=True, exist_ok=True)
            _build_target(go, target, directory)
    assemble(assembly_plan(TARGETS, directories), assembled)
    built = ", ".join(target.module for target in stale) or "none"
    _log(f"all binaries built in {time.monotonic() - started:.1f}s into {assembled} (rebuilt: {built})")
    return assembled


if __name__ == "__main__":
    try:
        print(ensure_binaries())
    except BuildError as err:
        print(f"error: {err}", file=sys.stderr)
        sys.exit(1)
