"""The kustomize subset the local cluster applies manifests/ with: the shipped kustomizations read
as `kubectl apply -k` would, with only the image replaced."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from olm_testkit.deploy import install, kustomize

SHIPPED = "quay.io/olm-py/olm"


def kinds_of(objects: list[dict[str, object]]) -> list[tuple[object, object]]:
    return sorted((str(o["kind"]), str((o["metadata"] or {})["name"])) for o in objects)  # type: ignore[index]


def test_both_kustomizations_build_every_listed_file() -> None:
    for directory in kustomize.OLM_KUSTOMIZATIONS:
        listed = yaml.safe_load((directory / "kustomization.yaml").read_text())["resources"]
        expected = sum(
            1 for name in listed for doc in yaml.safe_load_all((directory / name).read_text()) if doc
        )
        assert len(kustomize.build(directory)) == expected


def test_an_override_replaces_only_the_image() -> None:
    plain = [o for d in kustomize.OLM_KUSTOMIZATIONS for o in kustomize.build(d)]
    new = "10.87.0.1:5000/olm-py/olm@sha256:" + "a" * 64
    changed = install.olm_objects(new)
    assert kinds_of(plain) == kinds_of(changed)
    assert kustomize.images_in(changed) == {new}
    for before, after in zip(plain, changed, strict=True):
        if before["kind"] != "Deployment":
            assert before == after


def test_the_shipped_image_name_is_found_in_the_manifests() -> None:
    assert kustomize.shipped_image() == SHIPPED


@pytest.mark.parametrize(
    ("image", "expected"),
    [
        pytest.param("quay.io/olm-py/olm:latest", ("quay.io/olm-py/olm", "latest"), id="tag"),
        pytest.param("10.87.0.1:5000/olm", ("10.87.0.1:5000/olm", ""), id="port-is-no-tag"),
        pytest.param("10.87.0.1:5000/olm:v1", ("10.87.0.1:5000/olm", "v1"), id="port-and-tag"),
        pytest.param("olm@sha256:abc", ("olm", ""), id="digest"),
        pytest.param("olm", ("olm", ""), id="bare"),
    ],
)
def test_split_tag(image: str, expected: tuple[str, str]) -> None:
    assert kustomize.split_tag(image) == expected


def test_overlay_lists_the_bases_and_sets_only_images(tmp_path: Path) -> None:
    overlay_dir = kustomize.MANIFESTS / "local-overlay-for-test"
    text = kustomize.overlay(
        kustomize.OLM_KUSTOMIZATIONS,
        [kustomize.ImageOverride(name=SHIPPED, new_ref="localhost/olm-py/olm:dev")],
        relative_to=overlay_dir,
    )
    document = yaml.safe_load(text)
    assert set(document) == {"apiVersion", "kind", "resources", "images"}
    assert document["resources"] == ["../catalogd", "../operator-controller"]
    assert document["images"] == [{"name": SHIPPED, "newName": "localhost/olm-py/olm", "newTag": "dev"}]


def test_overlay_built_here_equals_the_override(tmp_path: Path) -> None:
    overlay_dir = tmp_path / "overlay"
    overlay_dir.mkdir()
    new = "registry.local:5000/olm-py/olm:v2"
    (overlay_dir / "kustomization.yaml").write_text(
        kustomize.overlay(
            kustomize.OLM_KUSTOMIZATIONS,
            [kustomize.ImageOverride(name=SHIPPED, new_ref=new)],
            relative_to=overlay_dir,
        )
    )
    assert kustomize.build(overlay_dir) == install.olm_objects(new)


def test_unknown_kustomization_fields_are_refused(tmp_path: Path) -> None:
    (tmp_path / "kustomization.yaml").write_text("resources: []\npatches: []\n")
    with pytest.raises(kustomize.KustomizeError, match="patches"):
        kustomize.build(tmp_path)


def _overlay_with_component(directory: Path, component: Path) -> Path:
    (directory / "kustomization.yaml").write_text(
        kustomize.overlay(kustomize.OLM_KUSTOMIZATIONS, [], relative_to=directory, components=[component])
    )
    return directory


def test_a_component_adds_its_resources_and_patches_its_target(tmp_path: Path) -> None:
    plain = [o for d in kustomize.OLM_KUSTOMIZATIONS for o in kustomize.build(d)]
    built = kustomize.build(_overlay_with_component(tmp_path, kustomize.MANIFESTS / "shared-drift-watches"))
    assert kinds_of(built) == sorted(
        [
            *kinds_of(plain),
            ("ClusterRole", "operator-controller-shared-drift-watches"),
            ("ClusterRoleBinding", "operator-controller-shared-drift-watches"),
        ]
    )
    changed = [(a, b) for a, b in zip(plain, built[: len(plain)], strict=True) if a != b]
    ((before, after),) = changed
    assert after["metadata"]["name"] == "operator-controller-controller-manager"
    (old,) = before["spec"]["template"]["spec"]["containers"]
    (new,) = after["spec"]["template"]["spec"]["containers"]
    assert new["args"] == [*old["args"], "--shared-drift-watches"]


def test_the_default_installer_component_adds_its_account_and_flag(tmp_path: Path) -> None:
    plain = [o for d in kustomize.OLM_KUSTOMIZATIONS for o in kustomize.build(d)]
    built = kustomize.build(_overlay_with_component(tmp_path, kustomize.MANIFESTS / "default-installer"))
    assert kinds_of(built) == sorted(
        [
            *kinds_of(plain),
            ("ServiceAccount", "olm-default-installer"),
            ("ClusterRoleBinding", "olm-default-installer"),
        ]
    )
    (deployment,) = [
        o
        for o in built
        if (o["kind"], o["metadata"]["name"]) == ("Deployment", "operator-controller-controller-manager")
    ]
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert container["args"][-1] == "--default-service-account=olmv1-system/olm-default-installer"


def _component(directory: Path, patch: str, target: dict[str, str]) -> Path:
    directory.mkdir()
    (directory / "kustomization.yaml").write_text(
        yaml.safe_dump({"kind": "Component", "patches": [{"target": target, "patch": patch}]})
    )
    return directory


def test_a_component_patch_must_match_one_object(tmp_path: Path) -> None:
    component = _component(
        tmp_path / "c", "- {op: add, path: /metadata/labels/x, value: y}", {"kind": "Deployment"}
    )
    with pytest.raises(kustomize.KustomizeError, match="matches 2 objects, not 1"):
        kustomize.build(_overlay_with_component(tmp_path, component))


def test_a_component_patch_other_than_add_is_refused(tmp_path: Path) -> None:
    component = _component(
        tmp_path / "c",
        "- {op: remove, path: /metadata/labels}",
        {"kind": "Deployment", "name": "operator-controller-controller-manager"},
    )
    with pytest.raises(kustomize.KustomizeError, match="'remove' is not supported"):
        kustomize.build(_overlay_with_component(tmp_path, component))
