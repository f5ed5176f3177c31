"""A release's artifacts, built from one commit (`make release`, `python -m hack.release`).

Into `<out>/<tag>/`:

- `install.yaml`: everything OLM needs in one file, in apply order: the CRDs of `manifests/crds`,
  then `manifests/catalogd` and `manifests/operator-controller` as kustomize builds them, the image
  pinned by digest (`<image name>@sha256:...`);
- `olm-image.oci.tar`: that image as an OCI archive, named by the tag, to copy into a registry
  (its manifest is copied unchanged, so the digest `install.yaml` pins still holds);
- `dist/`: the wheels and sdists of olm-py and olm-runtime;
- `NOTES.md`: the CHANGELOG section of the version (`Unreleased` for a snapshot);
- `SHA256SUMS`: the digest of every file above, in `sha256sum -c` format.

All of it carries the version `olm_testkit.release.version` decides. A release (a tagged commit,
checked out clean) must have its CHANGELOG section; anything else builds a snapshot.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from olm_testkit.deploy import kustomize
from olm_testkit.image import build as image_build
from olm_testkit.image import oci, shell
from olm_testkit.release import source
from olm_testkit.release import version as versions

__all__ = [
    "ARCHIVE",
    "MANIFEST",
    "Release",
    "ReleaseError",
    "changelog_section",
    "install_objects",
    "make",
    "write_manifest",
]

MANIFEST = "install.yaml"
ARCHIVE = "olm-image.oci.tar"
NOTES = "NOTES.md"
CHECKSUMS = "SHA256SUMS"
DISTRIBUTIONS = "dist"
CHANGELOG = "CHANGELOG.md"
UNRELEASED = "Unreleased"
REVISION_LABEL = "org.opencontainers.image.revision"
KUSTOMIZATIONS = ("manifests/catalogd", "manifests/operator-controller")
CRDS = "manifests/crds"
_SECTION = re.compile(r"^## \[([^\]]+)\].*$", re.MULTILINE)


class ReleaseError(RuntimeError):
    """The release cannot be built; nothing is left in its directory."""


@dataclass(frozen=True, kw_only=True)
class Release:
    build: versions.Build
    directory: Path
    image: str
    """`<name>@sha256:...`: what `install.yaml` runs."""
    local: image_build.LocalImage

    @property
    def manifest(self) -> Path:
        return self.directory / MANIFEST

    @property
    def archive(self) -> Path:
        return self.directory / ARCHIVE

    @property
    def digest(self) -> str:
        return self.image.partition("@")[2]


def changelog_section(text: str, heading: str) -> str | None:
    """The body of `## [heading]` in a Keep a Changelog file, without its heading; None if absent."""
    sections = list(_SECTION.finditer(text))
    for index, match in enumerate(sections):
        if match.group(1) == heading:
            end = sections[index + 1].start() if index + 1 < len(sections) else len(text)
            return text[match.end() : end].strip() + "\n"
    return None


def _shipped(tree: Path) -> str:
    return kustomize.shipped_image(tuple(tree / directory for directory in KUSTOMIZATIONS))


def install_objects(tree: Path, image: str) -> list[dict[str, Any]]:
    """OLM's objects from `tree`'s manifests, in apply order, the shipped image replaced by `image`."""
    crds = [
        document
        for path in sorted((tree / CRDS).glob("*.yaml"))
        for document in yaml.safe_load_all(path.read_text())
        if document
    ]
    override = kustomize.ImageOverride(name=_shipped(tree), new_ref=image)
    return [
        *crds,
        *(obj for directory in KUSTOMIZATIONS for obj in kustomize.build(tree / directory, [override])),
    ]


def write_manifest(path: Path, objects: Sequence[Mapping[str, Any]], *, build: versions.Build) -> None:
    header = (
        f"# OLM {build.tag} (commit {build.commit}): CRDs, catalogd and operator-controller.\n"
        "# Needs cert-manager. Apply with: kubectl apply --server-side -f install.yaml\n"
    )
    path.write_text(header + yaml.safe_dump_all([dict(obj) for obj in objects], sort_keys=False))


def make(
    project_dir: Path,
    out_root: Path,
    *,
    image_name: str | None = None,
    cache_root: Path | None = None,
) -> Release:
    """Build the checkout's release (or snapshot) into `out_root/<tag>/`, replacing what was there.
    `image_name`: the name `install.yaml` pins the digest to; the manifests' own by default."""
    build = source.read_build(project_dir)
    changelog = (project_dir / CHANGELOG).read_text() if (project_dir / CHANGELOG).is_file() else ""
    notes = changelog_section(changelog, str(build.version) if build.tagged else UNRELEASED)
    if build.tagged and notes is None:
        raise ReleaseError(f"{CHANGELOG} has no section `## [{build.version}]` for {build.tag}")
    directory = out_root / build.tag
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    try:
        with tempfile.TemporaryDirectory(prefix="olm-release-") as scratch:
            tree = Path(scratch) / "tree"
            source.export(project_dir, tree)
            source.stamp(tree, build.python)
            wheels = _build_distributions(
                tree, directory / DISTRIBUTIONS, build, log=Path(scratch) / "uv-build.log"
            )
            labels = {REVISION_LABEL: build.commit}
            origin = image_build.labels(project_dir).get("org.opencontainers.image.source")
            if origin:
                labels["org.opencontainers.image.source"] = origin
            # The image installs the very wheels the release ships.
            local = image_build.build(
                project_dir=tree, cache_root=cache_root, extra_labels=labels, wheels=wheels
            )
            name = image_name or _shipped(tree)
            image = f"{name}@{local.image.digest}"
            write_manifest(directory / MANIFEST, install_objects(tree, image), build=build)
        oci.write_archive(local.image, directory / ARCHIVE, ref_name=build.tag)
        (directory / NOTES).write_text(f"# OLM {build.tag}\n\n" + (notes or "No notes.\n"))
        _write_checksums(directory)
    except (source.SourceError, shell.ImageBuildError, kustomize.KustomizeError, OSError) as err:
        shutil.rmtree(directory, ignore_errors=True)
        raise ReleaseError(f"building {build.tag}: {err}") from err
    except BaseException:
        shutil.rmtree(directory, ignore_errors=True)
        raise
    return Release(build=build, directory=directory, image=image, local=local)


def _build_distributions(tree: Path, destination: Path, build: versions.Build, *, log: Path) -> list[Path]:
    """Wheels and sdists of both distributions into `destination`; the wheels."""
    uv = shell.require("uv", "uv (hack/install-deps.sh installs it)")
    shell.run([uv, "build", "--all-packages", "--quiet", "--out-dir", str(destination)], log=log, cwd=tree)
    (destination / ".gitignore").unlink(missing_ok=True)  # uv marks its output directory ignored
    built = sorted(path.name for path in destination.iterdir())
    expected = 4  # a wheel and an sdist of each distribution
    if len(built) != expected or not all(f"-{build.python}" in name for name in built):
        raise ReleaseError(f"uv build made {built}, expected a wheel and an sdist of both at {build.python}")
    return sorted(destination.glob("*.whl"))


def _write_checksums(directory: Path) -> None:
    lines = []
    for path in sorted(p for p in directory.rglob("*") if p.is_file() and p.name != CHECKSUMS):
        with path.open("rb") as stream:
            digest = hashlib.file_digest(stream, "sha256")
        lines.append(f"{digest.hexdigest()}  {path.relative_to(directory).as_posix()}\n")
    (directory / CHECKSUMS).write_text("".join(lines))
