"""What a release writes, apart from the builds: install.yaml from this repository's manifests, and
its notes from the CHANGELOG."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from olm_testkit.deploy import install, kustomize
from olm_testkit.image.build import PROJECT_DIR
from olm_testkit.release import artifacts
from olm_testkit.release.version import Build, SemVer

PINNED = "registry.example.com/olm-py/olm@sha256:" + "b" * 64

CHANGELOG = """# Changelog

Intro.

## [Unreleased]

### Added

- Releases.

## [1.2.0] - 2026-11-01

### Fixed

- A bug.

## [1.1.0] - 2026-10-01

- Older.
"""


def test_the_notes_are_the_versions_section() -> None:
    assert artifacts.changelog_section(CHANGELOG, "Unreleased") == "### Added\n\n- Releases.\n"
    assert artifacts.changelog_section(CHANGELOG, "1.2.0") == "### Fixed\n\n- A bug.\n"
    assert artifacts.changelog_section(CHANGELOG, "1.1.0") == "- Older.\n"
    assert artifacts.changelog_section(CHANGELOG, "1.3.0") is None


def test_this_repositorys_changelog_has_an_unreleased_section() -> None:
    text = (PROJECT_DIR / artifacts.CHANGELOG).read_text()
    assert artifacts.changelog_section(text, artifacts.UNRELEASED)


def test_install_yaml_is_the_crds_then_the_shipped_manifests_with_the_image_pinned() -> None:
    objects = artifacts.install_objects(PROJECT_DIR, PINNED)
    crds = [o for o in objects if o["kind"] == "CustomResourceDefinition"]
    assert objects[: len(crds)] == crds, "the CRDs come first"
    assert len(crds) == len(list((PROJECT_DIR / artifacts.CRDS).glob("*.yaml")))
    assert objects[len(crds) :] == install.olm_objects(PINNED), "then exactly what the kustomizations build"
    assert kustomize.images_in(objects) == {PINNED}
    assert objects[len(crds)]["kind"] == "Namespace", "the namespace before what lives in it"


def test_the_written_manifest_reads_back_and_says_how_to_apply_it(tmp_path: Path) -> None:
    objects = artifacts.install_objects(PROJECT_DIR, PINNED)
    build = Build(version=SemVer(1, 2, 0), commit="c" * 40, distance=0, tagged=True)
    artifacts.write_manifest(tmp_path / "install.yaml", objects, build=build)
    text = (tmp_path / "install.yaml").read_text()
    assert text.startswith(f"# OLM v1.2.0 (commit {'c' * 40})")
    assert "kubectl apply --server-side -f install.yaml" in text
    assert [o for o in yaml.safe_load_all(text) if o] == objects


def test_manifests_that_name_two_images_are_refused(tmp_path: Path) -> None:
    for directory in artifacts.KUSTOMIZATIONS:
        (tmp_path / directory).mkdir(parents=True)
        image = "a/one:1" if directory.endswith("catalogd") else "b/two:1"
        deployment = {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "x"},
            "spec": {"template": {"spec": {"containers": [{"name": "c", "image": image}]}}},
        }
        (tmp_path / directory / "deployment.yaml").write_text(yaml.safe_dump(deployment))
        (tmp_path / directory / "kustomization.yaml").write_text("resources:\n  - deployment.yaml\n")
    with pytest.raises(kustomize.KustomizeError, match="2 images"):
        artifacts.install_objects(tmp_path, PINNED)
