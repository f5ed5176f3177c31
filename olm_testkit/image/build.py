"""Build the OLM image here, without Docker, and push it: the front door of `hack.image`.

`build()` makes the three layers (each cached, see `olm_testkit.image.cache`) and the config;
`build_and_push()` is `build()` followed by `olm_testkit.images.registry.RegistryClient.push` under a tag,
which uploads only the blobs the registry does not have yet. `base_image()` is the Debian layer
alone, as the base the Containerfile can be built from (`docker`/`buildah --build-arg BASE=...`).
"""

from __future__ import annotations

import contextlib
import hashlib
import subprocess
import tempfile
import time
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from olm_testkit.image import base, oci, venv
from olm_testkit.image import cache as caches
from olm_testkit.image import layer as tarlayer
from olm_testkit.image.shell import ImageBuildError
from olm_testkit.images import layout
from olm_testkit.images.registry import Reference, RegistryClient, RegistryError

PROJECT_DIR = Path(__file__).resolve().parents[2]
DEFAULT_REPOSITORY = "olm-py/olm"
COMMANDS = ("catalogd", "operator-controller")
"""The console scripts the image exists for; a build that lacks one fails."""
USER = f"{base.UID}:{base.UID}"
ENTRYPOINT = ("operator-controller",)
ENV = (
    f"PATH={venv.ROOT}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "PYTHONDONTWRITEBYTECODE=1",
    "PYTHONUNBUFFERED=1",
)
BASE_ENV = ("PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",)
BASE_REF_NAMES = {False: "bookworm", True: "bookworm-builder"}

__all__ = [
    "BuiltImage",
    "ImageBuildError",
    "LocalImage",
    "base_image",
    "build",
    "build_and_push",
]


@dataclass(frozen=True, kw_only=True)
class LocalImage:
    """A built image, not pushed: its layers in order (`base`, `deps`, `app`) and stage timings."""

    image: layout.Image
    layers: dict[str, tarlayer.Layer]
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def compressed_size(self) -> int:
        return sum(layer.size for layer in self.layers.values())

    @property
    def unpacked_size(self) -> int:
        return sum(layer.unpacked_size for layer in self.layers.values())


@dataclass(frozen=True, kw_only=True)
class BuiltImage:
    """A built image pushed to a registry under `reference` (`host/repository:tag`)."""

    reference: str
    digest: str
    local: LocalImage
    seconds: dict[str, float]
    """Per stage: `base`, `deps`, `app` (cache hits take milliseconds), `push`."""

    @property
    def digest_ref(self) -> str:
        """`host/repository@sha256:...`: what Deployments should run."""
        return f"{self.reference.rsplit(':', 1)[0]}@{self.digest}"

    @property
    def compressed_size(self) -> int:
        return self.local.compressed_size

    @property
    def unpacked_size(self) -> int:
        return self.local.unpacked_size


def build(
    *,
    project_dir: Path = PROJECT_DIR,
    cache_root: Path | None = None,
    extra_labels: Mapping[str, str] | None = None,
    wheels: Sequence[Path] = (),
) -> LocalImage:
    """Build (or take from the cache) the Debian, dependency and project layers, and the config;
    `extra_labels` are added to (or replace) those `labels(project_dir)` finds. The project layer
    installs `wheels` (both distributions' wheels) when given, else wheels built from `project_dir`."""
    cache = caches.Cache(root=cache_root or caches.default_root())
    logs = cache.root / "logs"
    seconds: dict[str, float] = {}
    with _timed(seconds, "base"):
        base_layer = base.ensure(cache, logs=logs)
    with _timed(seconds, "deps"):
        deps_layer = _deps_layer(cache, base_layer, project_dir=project_dir, log=logs / "deps.log")
    with _timed(seconds, "app"):
        app_layer, wheel_name = _app_layer(
            cache, base_layer, project_dir=project_dir, wheels=wheels, log=logs / "app.log"
        )
    built = {"base": base_layer, "deps": deps_layer, "app": app_layer}
    config = oci.config_blob(
        diff_ids=[layer.diff_id for layer in built.values()],
        history=[
            f"mmdebstrap --variant=essential {base.SUITE}: {' '.join(base.RUNTIME_PACKAGES)}",
            f"pip install the runtime dependencies locked in uv.lock into {venv.ROOT}",
            f"pip install {wheel_name} into {venv.ROOT}",
        ],
        labels={**labels(project_dir), **(extra_labels or {})},
        user=USER,
        env=ENV,
        entrypoint=ENTRYPOINT,
    )
    image = layout.Image(config=config, layers=tuple(layer.blob() for layer in built.values()))
    return LocalImage(image=image, layers=built, seconds=seconds)


def build_and_push(
    *,
    registry_host: str,
    ca_file: Path,
    repository: str = DEFAULT_REPOSITORY,
    tag: str,
    project_dir: Path = PROJECT_DIR,
    cache_root: Path | None = None,
) -> BuiltImage:
    """`build()`, then push to `registry_host/repository:tag` (TLS, trusting `ca_file`)."""
    local = build(project_dir=project_dir, cache_root=cache_root)
    reference = Reference(host=registry_host, repository=repository, tag=tag)
    started = time.monotonic()
    try:
        digest = RegistryClient(host=registry_host, ca_file=ca_file).push(local.image, reference)
    except (RegistryError, OSError) as err:
        raise ImageBuildError(f"pushing {reference}: {err}") from err
    seconds = {**local.seconds, "push": time.monotonic() - started}
    return BuiltImage(reference=str(reference), digest=digest, local=local, seconds=seconds)


def base_image(*, builder: bool = True, cache_root: Path | None = None) -> layout.Image:
    """The Debian layer alone as an image (root user, no entrypoint), to build the Containerfile
    from; `builder` adds the venv module and Debian's pip wheel, which its build stage needs."""
    cache = caches.Cache(root=cache_root or caches.default_root())
    packages = base.BUILDER_PACKAGES if builder else base.RUNTIME_PACKAGES
    layer = base.ensure(cache, packages=packages, logs=cache.root / "logs")
    config = oci.config_blob(
        diff_ids=[layer.diff_id],
        history=[f"mmdebstrap --variant=essential {base.SUITE}: {' '.join(packages)}"],
        labels={},
        env=BASE_ENV,
        cmd=[base.PYTHON],
    )
    return layout.Image(config=config, layers=(layer.blob(),))


def base_ref_name(*, builder: bool = True) -> str:
    """The name `base_image` is given in an OCI layout or archive (`oci:DIR:<name>`)."""
    return BASE_REF_NAMES[builder]


def labels(project_dir: Path) -> dict[str, str]:
    """OCI annotations from pyproject.toml; the source is its `Source`/`Repository` URL, else the
    git remote `origin` (left out when there is neither)."""
    project = tomllib.loads((project_dir / "pyproject.toml").read_text())["project"]
    found = {
        "org.opencontainers.image.title": str(project["name"]),
        "org.opencontainers.image.version": str(project["version"]),
        "org.opencontainers.image.description": str(project.get("description", "")),
    }
    license_text = project.get("license", {}).get("text")
    if license_text:
        found["org.opencontainers.image.licenses"] = str(license_text)
    urls = project.get("urls", {})
    source = urls.get("Source") or urls.get("Repository") or _git_origin(project_dir)
    if source:
        found["org.opencontainers.image.source"] = str(source)
    return found


def _git_origin(project_dir: Path) -> str | None:
    result = subprocess.run(
        ["git", "-C", str(project_dir), "remote", "get-url", "origin"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        return None
    return result.stdout.strip() or None


def _deps_layer(
    cache: caches.Cache, base_layer: tarlayer.Layer, *, project_dir: Path, log: Path
) -> tarlayer.Layer:
    key = caches.deps_key(
        lock_digest=caches.digest_files([project_dir / "uv.lock"]), base_diff_id=base_layer.diff_id
    )
    found = cache.load("deps", key)
    if found is not None:
        return found
    with cache.locked("deps", key) as directory:
        found = cache.load("deps", key)
        if found is not None:
            return found
        log.unlink(missing_ok=True)
        with tempfile.TemporaryDirectory(prefix="deps-", dir=directory) as scratch:
            rootfs = Path(scratch) / "rootfs"
            tarlayer.unpack([base_layer.path], rootfs)
            requirements = Path(scratch) / "requirements.txt"
            venv.export_requirements(project_dir, requirements, log=log)
            wheels = cache.root / "wheels"
            glibc = venv.glibc_version((rootfs / "var/lib/dpkg/status").read_text())
            venv.download_wheels(requirements, wheels, glibc=glibc, log=log)
            venv.create(rootfs, log=log)
            venv.install(
                rootfs,
                [
                    "--require-hashes",
                    "--find-links",
                    venv.staged(wheels.name),
                    "--requirement",
                    venv.staged(requirements.name),
                ],
                [requirements, wheels],
                log=log,
            )
            built = tarlayer.write(
                rootfs, tarlayer.with_parents(venv.contents(rootfs)), directory / "layer.tar.gz"
            )
        cache.store("deps", key, built)
        return built


def _app_layer(
    cache: caches.Cache, base_layer: tarlayer.Layer, *, project_dir: Path, wheels: Sequence[Path], log: Path
) -> tuple[tarlayer.Layer, str]:
    log.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory(prefix="olm-image-app-") as scratch:
        wheels = list(wheels) or venv.build_wheels(project_dir, Path(scratch) / "dist", log=log)
        names = " ".join(wheel.name for wheel in wheels)
        digest = hashlib.sha256(b"".join(hashlib.sha256(w.read_bytes()).digest() for w in wheels))
        key = caches.app_key(wheel_digest=digest.hexdigest(), base_diff_id=base_layer.diff_id)
        found = cache.load("app", key)
        if found is not None:
            return found, names
        with cache.locked("app", key) as directory:
            found = cache.load("app", key)
            if found is not None:
                return found, names
            rootfs = Path(scratch) / "rootfs"
            tarlayer.unpack([base_layer.path], rootfs)
            venv.create(rootfs, log=log)
            skeleton = set(venv.contents(rootfs))
            venv.install(rootfs, [venv.staged(wheel.name) for wheel in wheels], wheels, log=log)
            added = [path for path in venv.contents(rootfs) if path not in skeleton]
            scripts = venv.ROOT.relative_to("/") / "bin"
            missing = [name for name in COMMANDS if scripts / name not in added]
            if missing:
                raise ImageBuildError(f"installing {names} made no console script {', '.join(missing)}")
            built = tarlayer.write(rootfs, tarlayer.with_parents(added), directory / "layer.tar.gz")
            cache.store("app", key, built)
        cache.prune("app", keep=caches.APP_ENTRIES_KEPT)
        return built, names


@contextlib.contextmanager
def _timed(seconds: dict[str, float], stage: str) -> Iterator[None]:
    started = time.monotonic()
    try:
        yield
    finally:
        seconds[stage] = time.monotonic() - started
