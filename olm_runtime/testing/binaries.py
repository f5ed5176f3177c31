"""The control plane's binaries, built from pinned Go modules into a cache once per pin, or found there.

`python -m olm_runtime.testing binaries` (and `up`, and the `control_plane_binaries` fixture, unless
`$OLMPY_ASSETS` names a directory) returns a directory holding `etcd`, `kube-apiserver`,
`kube-controller-manager`, `kube-scheduler`, `kwok` and `kwok-stages.yaml`: found in the cache when
already built, else built first, which needs Go >= 1.26 on PATH and the Go module proxy (a cold
build takes minutes; nothing but Go modules is downloaded).

The versions ship in this package as Go wrapper modules, `gomod/<module>/`: a `go.mod` and `go.sum`
pinning one upstream release, and a `main.go` where the release has no main package of its own
(etcd `go.etcd.io/etcd/server/v3` v3.6.5, Kubernetes `k8s.io/kubernetes` v1.35.4, kwok
`sigs.k8s.io/kwok` v0.8.0). kwok's Stages are the ones its release ships as its fast defaults,
read from the pinned kwok module's source.

Each `Target` (one wrapper module and the main packages built from it) is built once into
`<cache>/targets/<name>-<key>/`, the key a digest of that wrapper module's files and of how it is
built, so changing one pin rebuilds only that target. `ensure()` returns one directory per set of
targets, `<cache>/<kubernetes release>-<combined key>/`, of hard links to every output. Builds and
assemblies go to a temporary directory that is renamed into place when complete: an interrupted
build never leaves a half-filled cache entry. One process at a time builds a target (a lock beside
its entry): another that needs it meanwhile waits and then finds it built. The cache is
`$OLM_RUNTIME_CACHE_DIR`, by default `~/.cache/olm-runtime/bin` (under `$XDG_CACHE_HOME` when set).

Other programs are built the same way from wrapper modules of their own: a Target names the
directory its module lives in (`gomod`), and `ensure()` takes any set of targets.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import itertools
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

GOMOD_DIR = Path(__file__).resolve().parent / "gomod"
"""The wrapper modules shipped with the runtime (package data)."""

BUILD_RECIPE = "2"
"""Part of every target's key: bump it when the way `go_build` builds changes (flags,
environment), since that is not in the wrapper modules' files."""

KWOK_STAGES_FILE = "kwok-stages.yaml"

AssetWriter = Callable[[str, Path, Path], None]
"""Writes a target's files besides its binaries: called with the `go` command, the wrapper
module's directory and the directory to write them into."""


class BuildError(RuntimeError):
    """The binaries could not be built; the message says what to install or what failed."""


@dataclass(frozen=True, kw_only=True)
class SourcePatch:
    """Lines inserted into a pinned dependency's source before a target is built: the fix of an
    upstream bug the binaries would otherwise hit, until a release carries one.

    The module is copied out of the module cache (read-only, and Go refuses overlays of files under
    it) and the wrapper module's copy replaces the dependency by that copy. `after` must occur
    exactly once in the file, so a new pin can neither leave the bug silently unfixed nor patch
    the wrong place: it fails the build and the patch is reviewed again."""

    module: str
    """The dependency's module path."""
    file: str
    """The file, relative to the module's root."""
    after: str
    """Text of the file that the lines go after."""
    insert: str
    """The lines inserted."""
    reason: str = field(repr=False)
    """What goes wrong without it (for the build log and the docs; out of the repr, which is part
    of the key: rewording it rebuilds nothing)."""

    def apply(self, root: Path) -> None:
        path = root / self.file
        text = path.read_text()
        found = text.count(self.after)
        if found != 1:
            raise BuildError(
                f"cannot patch {self.module}/{self.file} ({self.reason}): the text to insert after "
                f"occurs {found} times instead of once; review the patch against the new pin"
            )
        path.write_text(text.replace(self.after, self.after + self.insert))


@dataclass(frozen=True, kw_only=True)
class Target:
    """One wrapper module and the main packages built from it."""

    module: str
    """Directory name of the wrapper module under `gomod`."""
    packages: tuple[str, ...]
    """Main packages (import paths, or "." for the module's own); go names each binary."""
    binaries: tuple[str, ...]
    """The binaries this target produces, for the log and the completeness check."""
    rename: bool = False
    """Build each package on its own into the binary named at the same position of `binaries`,
    instead of letting go name it after the package's last path element (for mains named
    `./controller` and the like: names that say nothing beside kube-controller-manager)."""
    assets: tuple[str, ...] = ()
    """Files besides the binaries, written by `write_assets` (from the pinned module's source)."""
    tags: tuple[str, ...] = field(default=(), repr=False)
    """Go build tags."""
    stamp_kubernetes_version: bool = False
    """Link the release of k8s.io/kubernetes that the module pins into the version the binaries
    report: a plain `go build` of k8s.io/kubernetes reports v0.0.0-master."""
    # The fields below are left out of the repr, which is part of the key: cache entries built
    # before they existed keep their keys.
    name: str = field(default="", repr=False)
    """The target's name in a set and in the cache (`targets/<name>-<key>`); the module's by
    default. Two targets built from one module need names of their own."""
    gomod: Path = field(default=GOMOD_DIR, repr=False, compare=False)
    """The directory holding the wrapper module (`gomod/<module>`)."""
    write_assets: AssetWriter | None = field(default=None, repr=False, compare=False)
    patches: tuple[SourcePatch, ...] = field(default=(), repr=False)
    """Fixes made to pinned dependencies before building (part of the key, not of the repr)."""

    def __post_init__(self) -> None:
        if not self.name:
            object.__setattr__(self, "name", self.module)

    @property
    def module_dir(self) -> Path:
        return self.gomod / self.module

    @property
    def outputs(self) -> tuple[str, ...]:
        return (*self.binaries, *self.assets)


# kwok simulates nothing without Stage configuration. These are the stages kwok's own release
# ships as its fast defaults (nodes become Ready and keep their lease; pods become Ready, complete
# and go away); they are read from the pinned kwok module's source, not copied into this package.
KWOK_STAGES = (
    "kustomize/stage/node/fast/node-initialize.yaml",
    "kustomize/stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml",
    "kustomize/stage/pod/fast/pod-ready.yaml",
    "kustomize/stage/pod/fast/pod-complete.yaml",
    "kustomize/stage/pod/fast/pod-delete.yaml",
)


def go_environment() -> dict[str, str]:
    """The environment of every `go` command: static binaries, the wrapper module's go.sum as is,
    and no go.work of a directory the package happens to be installed under. (Outside a Go
    workspace `GOWORK=off` changes nothing, so it is not part of BUILD_RECIPE.)"""
    return {**os.environ, "CGO_ENABLED": "0", "GOFLAGS": "-mod=readonly -buildvcs=false", "GOWORK": "off"}


def module_source(go: str, module_dir: Path, module: str) -> Path:
    """The directory of the pinned `module`'s source in the module cache (downloaded by the build)."""
    result = subprocess.run(
        [go, "list", "-m", "-f", "{{.Dir}}", module],
        cwd=module_dir,
        env=go_environment(),
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0 or not result.stdout.strip():
        raise BuildError(f"cannot locate the {module} module source: {result.stderr.strip()}")
    return Path(result.stdout.strip())


def write_kwok_stages(go: str, module_dir: Path, output: Path) -> None:
    source = module_source(go, module_dir, "sigs.k8s.io/kwok")
    documents = [(source / stage).read_text().strip() for stage in KWOK_STAGES]
    (output / KWOK_STAGES_FILE).write_text("\n---\n".join(documents) + "\n")


ETCD = Target(module="etcd", packages=(".",), binaries=("etcd",))

OPENAPI_V3_NEW_GROUP_RACE = SourcePatch(
    module="k8s.io/kube-openapi",
    file="pkg/handler3/handler.go",
    # A new group-version's entry is published to the discovery document before its spec is
    # stored; the OpenAPI v3 aggregator reads that document every second without the lock, and
    # reading an entry with no spec stored dereferences nil: kube-apiserver dies while a CRD of a
    # new group becomes Established. Storing the spec before publishing the entry closes it.
    after="\t\to.v3Schema[group] = newOpenAPIV3Group()\n",
    insert="\t\to.v3Schema[group].UpdateSpec(openapi)\n",
    reason="kube-apiserver panics in the OpenAPI v3 discovery when a CRD of a new group is added",
)

KUBERNETES = Target(
    module="kubernetes",
    packages=(
        "k8s.io/kubernetes/cmd/kube-apiserver",
        "k8s.io/kubernetes/cmd/kube-controller-manager",
        "k8s.io/kubernetes/cmd/kube-scheduler",
    ),
    binaries=("kube-apiserver", "kube-controller-manager", "kube-scheduler"),
    stamp_kubernetes_version=True,
    patches=(OPENAPI_V3_NEW_GROUP_RACE,),
)
KWOK = Target(
    module="kwok",
    packages=("sigs.k8s.io/kwok/cmd/kwok",),
    binaries=("kwok",),
    assets=(KWOK_STAGES_FILE,),
    write_assets=write_kwok_stages,
)
CONTROL_PLANE = (ETCD, KUBERNETES, KWOK)
"""What `ControlPlane` runs."""


# Keys -------------------------------------------------------------------------------------------


def cache_root() -> Path:
    """`$OLM_RUNTIME_CACHE_DIR`, else `olm-runtime/bin` under `$XDG_CACHE_HOME` or `~/.cache`."""
    configured = os.environ.get("OLM_RUNTIME_CACHE_DIR")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return Path(base) / "olm-runtime" / "bin"


def pin_key(root: Path) -> str:
    """A digest of every file under `root` (a wrapper module): it changes exactly when a pin changes."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if path.is_file():
            digest.update(str(path.relative_to(root)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def target_key(target: Target) -> str:
    """The key of one target's cache entry: its own wrapper module's files and how it is built."""
    recipe = f"{BUILD_RECIPE}\0{target!r}\0{pin_key(target.module_dir)}"
    if target.tags:  # kept out of the repr so that adding the field left the other targets' keys alone
        recipe += f"\0tags={','.join(target.tags)}"
    if target.patches:  # likewise
        recipe += f"\0patches={target.patches!r}"
    return hashlib.sha256(recipe.encode()).hexdigest()[:16]


def target_keys(targets: Iterable[Target]) -> dict[str, str]:
    """Each target's key, by name."""
    keys: dict[str, str] = {}
    for target in targets:
        if target.name in keys:
            raise BuildError(f"two targets are named {target.name}")
        keys[target.name] = target_key(target)
    return keys


def combined_key(keys: Mapping[str, str]) -> str:
    """The key of an assembled directory: it changes when any of its targets' keys does."""
    digest = hashlib.sha256("".join(f"{name}={keys[name]}\n" for name in sorted(keys)).encode())
    return digest.hexdigest()[:16]


def target_dir(root: Path, name: str, key: str) -> Path:
    return root / "targets" / f"{name}-{key}"


def required_version(module_dir: Path, module: str) -> str:
    """The version of `module` that the wrapper module in `module_dir` pins."""
    for line in (module_dir / "go.mod").read_text().splitlines():
        fields = line.replace("require", "").split()
        if len(fields) >= 2 and fields[0] == module:
            return fields[1]
    raise BuildError(f"{module_dir / 'go.mod'} does not require {module}")


def kubernetes_version() -> str:
    """The Kubernetes release the control plane runs."""
    return required_version(GOMOD_DIR / "kubernetes", "k8s.io/kubernetes")


def assembled_dir(targets: Sequence[Target] = CONTROL_PLANE, root: Path | None = None) -> Path:
    """The directory `ensure(targets)` returns; it may not exist yet."""
    root = cache_root() if root is None else root
    return root / f"{kubernetes_version()}-{combined_key(target_keys(targets))}"


def assembly_plan(targets: Iterable[Target], directories: Mapping[str, Path]) -> dict[str, Path]:
    """Which file of which target directory (by target name) each name of the assembled directory
    links to."""
    plan: dict[str, Path] = {}
    for target in targets:
        for name in target.outputs:
            if name in plan:
                raise BuildError(f"two targets produce {name}")
            plan[name] = directories[target.name] / name
    return plan


# Building ---------------------------------------------------------------------------------------


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


def go_toolchain() -> str:
    go = shutil.which("go")
    if go is None:
        raise BuildError(
            "the Go toolchain is not on PATH: install Go >= 1.26 (it builds the pinned control plane), "
            "or set OLMPY_ASSETS to a directory holding the binaries"
        )
    return go


def _go(go: str, module_dir: Path, *args: str) -> None:
    """Run `go args...` in `module_dir`; a failure names the command (its words before the first
    flag) and ends with go's own message."""
    result = subprocess.run(
        [go, *args], cwd=module_dir, env=go_environment(), capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        command = " ".join(itertools.takewhile(lambda arg: not arg.startswith("-"), args))
        raise BuildError(f"go {command} in {module_dir} failed:\n{result.stderr[-4000:]}")


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
    args = ["build", "-trimpath", f"-ldflags={flags}", "-o", target]
    if tags:
        args.append(f"-tags={','.join(tags)}")
    _go(go_toolchain(), module_dir, *args, *packages)


def _log(message: str) -> None:
    print(f"olm-runtime binaries: {message}", file=sys.stderr, flush=True)


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


def patched_module(go: str, target: Target, work: Path, log: Callable[[str], None]) -> Path:
    """A copy of `target`'s wrapper module under `work` whose patched dependencies are replaced by
    patched copies of them, also under `work`."""
    module_dir = work / "module"
    shutil.copytree(target.module_dir, module_dir)
    for module in sorted({patch.module for patch in target.patches}):
        _go(go, module_dir, "mod", "download", module)
        copy = work / "patched" / module.replace("/", "_")
        shutil.copytree(module_source(go, module_dir, module), copy)
        for path in (copy, *copy.rglob("*")):  # the module cache's files are read-only
            path.chmod(path.stat().st_mode | 0o200)
        for patch in target.patches:
            if patch.module == module:
                patch.apply(copy)
                log(f"patched {module}/{patch.file}: {patch.reason}")
        _go(go, module_dir, "mod", "edit", f"-replace={module}={copy}")
    return module_dir


def _build_target(go: str, target: Target, destination: Path, log: Callable[[str], None]) -> None:
    log(f"building {', '.join(target.binaries)} from {target.module_dir}")
    started = time.monotonic()
    ldflags: tuple[str, ...] = ()
    if target.stamp_kubernetes_version:
        ldflags = kubernetes_version_ldflags(required_version(target.module_dir, "k8s.io/kubernetes"))
    staging = Path(tempfile.mkdtemp(prefix=".build-", dir=destination.parent))
    work = Path(tempfile.mkdtemp(prefix=".patch-", dir=destination.parent)) if target.patches else None
    try:
        module_dir = target.module_dir if work is None else patched_module(go, target, work, log)
        if target.rename:
            for package, name in zip(target.packages, target.binaries, strict=True):
                go_build(module_dir, (package,), staging / name, ldflags=ldflags, tags=target.tags)
        else:
            # The module directory is named after the wrapper, not the binary: name "." explicitly.
            output = staging / target.binaries[0] if target.packages == (".",) else staging
            go_build(module_dir, target.packages, output, ldflags=ldflags, tags=target.tags)
        if target.assets:
            if target.write_assets is None:
                raise BuildError(f"no writer for the assets of {target.name}: {', '.join(target.assets)}")
            target.write_assets(go, target.module_dir, staging)
        if not _complete(staging, target.outputs):
            raise BuildError(f"building {target.name} did not produce all of {', '.join(target.outputs)}")
        _place(staging, destination, target.outputs)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
        if work is not None:
            shutil.rmtree(work, ignore_errors=True)
    log(f"built {', '.join(target.binaries)} in {time.monotonic() - started:.1f}s")


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


def build_lock_file(directory: Path) -> Path:
    """The file whose `flock` a process holds while it builds the cache entry `directory`."""
    return directory.parent / f".{directory.name}.lock"


@contextlib.contextmanager
def _build_lock(directory: Path, log: Callable[[str], None]) -> Iterator[None]:
    """Hold the build of one target's cache entry: a second process that needs the same target
    waits for the first to finish it instead of compiling it again beside it (`make test` builds
    the test-only tools while its sessions start, and a test that needs one meets that build)."""
    with open(build_lock_file(directory), "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log(f"waiting for another process building {directory.name}")
            started = time.monotonic()
            fcntl.flock(lock, fcntl.LOCK_EX)
            log(f"waited {time.monotonic() - started:.1f}s for {directory.name}")
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def ensure(
    targets: Sequence[Target] = CONTROL_PLANE,
    *,
    root: Path | None = None,
    sources: Iterable[Path] = (),
    build: bool = True,
    log: Callable[[str], None] = _log,
) -> Path:
    """Return the directory holding every output of `targets`, building the missing ones first.

    `root` is the cache (`cache_root()` by default). `sources` are other caches of the same layout:
    a complete entry there with the same key is linked in instead of built. Without `build`, a
    target found nowhere raises BuildError instead of being built.
    """
    root = cache_root() if root is None else root
    keys = target_keys(targets)
    outputs = [name for target in targets for name in target.outputs]
    assembled = root / f"{kubernetes_version()}-{combined_key(keys)}"
    if _complete(assembled, outputs):
        return assembled
    directories = {target.name: target_dir(root, target.name, keys[target.name]) for target in targets}
    missing = [target for target in targets if not _complete(directories[target.name], target.outputs)]
    for target in list(missing):
        for source in sources:
            found = target_dir(source, target.name, keys[target.name])
            if source != root and _complete(found, target.outputs):
                assemble({name: found / name for name in target.outputs}, directories[target.name])
                log(f"found {', '.join(target.binaries)} in {found}")
                missing.remove(target)
                break
    if missing and not build:
        names = ", ".join(name for target in missing for name in target.binaries)
        raise BuildError(
            f"not built yet in {root}: {names} (`python -m olm_runtime.testing binaries` builds them)"
        )
    started = time.monotonic()
    if missing:
        go = go_toolchain()
        for target in missing:
            directory = directories[target.name]
            directory.parent.mkdir(parents=True, exist_ok=True)
            with _build_lock(directory, log):
                # Another process may have built it while this one waited for the lock.
                if not _complete(directory, target.outputs):
                    _build_target(go, target, directory, log)
    assemble(assembly_plan(targets, directories), assembled)
    if missing:
        built = ", ".join(target.name for target in missing)
        log(f"built {built} in {time.monotonic() - started:.1f}s; all binaries in {assembled}")
    return assembled
