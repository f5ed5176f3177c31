"""The steady-reconcile memo: its key changes with every input of a revision's content, and only then."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from olm import version
from olm.api import names
from olm.api.extensionspec import ExtensionSpec, Readiness
from olm.api.revisions import Revision
from olm.operator_controller import applier
from olm.operator_controller.applier import revisions
from olm.operator_controller.clusterextension.memo import (
    Rendered,
    RenderKey,
    RenderMemo,
    recorded,
    render_key,
    renderer,
    stored_key,
)
from olm.pipeline.render import CertManagerProvider, manifests_for
from unit import realdata

IMAGE = "registry.test/bundles/argocd@sha256:" + "a" * 64
OTHER_IMAGE = "registry.test/bundles/argocd@sha256:" + "b" * 64


def extension(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "olm.operatorframework.io/v1",
        "kind": "ClusterExtension",
        "metadata": {"name": "argocd", "generation": 1, "uid": "u-1"},
        "spec": {
            "namespace": "argocd",
            "serviceAccount": {"name": "installer"},
            "source": {"sourceType": "Catalog", "catalog": {"packageName": "argocd-operator"}},
            **spec,
        },
    }


def key_of(obj: dict[str, Any], image: str = IMAGE) -> RenderKey:
    return render_key(image, ExtensionSpec.of(obj))


def inline(config: dict[str, Any]) -> dict[str, Any]:
    return {"config": {"configType": "Inline", "inline": config}}


def test_fields_outside_the_render_leave_the_key_alone() -> None:
    base = extension()
    changed = copy.deepcopy(base)
    changed["metadata"].update(generation=7, annotations={"poke": "1"}, labels={"team": "a"})
    changed["spec"]["serviceAccount"]["name"] = "someone-else"
    changed["spec"]["source"]["catalog"].update(version=">=1.0.0", channels=["alpha"])
    changed["spec"]["install"] = {"preflight": {"crdUpgradeSafety": {"enforcement": "None"}}}
    assert key_of(changed) == key_of(base)


def test_inline_config_is_compared_as_json_not_as_key_order() -> None:
    first = extension(**inline({"watchNamespace": "team-a", "deploymentConfig": {"env": [{"name": "X"}]}}))
    second = extension(**inline({"deploymentConfig": {"env": [{"name": "X"}]}, "watchNamespace": "team-a"}))
    assert key_of(first) == key_of(second)


@pytest.mark.parametrize(
    ("changed", "image"),
    [
        pytest.param(extension(), OTHER_IMAGE, id="bundle image digest"),
        pytest.param(extension(namespace="elsewhere"), IMAGE, id="install namespace"),
        pytest.param(extension(**inline({"watchNamespace": "team-a"})), IMAGE, id="inline config"),
        pytest.param(extension(progressDeadlineMinutes=30), IMAGE, id="progress deadline"),
        pytest.param(extension(upgrade={"readiness": "Respect"}), IMAGE, id="operator condition contract"),
    ],
)
def test_every_input_of_the_content_changes_the_key(changed: dict[str, Any], image: str) -> None:
    assert key_of(changed, image) != key_of(extension())


def content_digest(obj: dict[str, Any]) -> str:
    """What `render` + `pack` compute for `obj`, as the reconcile does (revision number aside)."""
    spec = ExtensionSpec.of(obj)
    rv1 = realdata.load(realdata.BUNDLES / "argocd-operator" / "0.18.0")
    objects = manifests_for(
        rv1,
        spec.namespace,
        spec.config,
        certificate_provider=CertManagerProvider(),
        operator_condition=spec.upgrade.readiness is not Readiness.NONE,
    )
    packed = applier.pack(
        "argocd-1", "argocd", objects, applier.PackingOptions(system_namespace="olmv1-system")
    )
    return revisions.content_digest(packed, spec.progress_deadline_minutes)


def test_equal_keys_mean_equal_content() -> None:
    """The key is complete: extensions that differ only outside it get the same content digest."""
    config = {"deploymentConfig": {"env": [{"name": "LOG_LEVEL", "value": "debug"}]}}
    base = extension(**inline(config))
    other = copy.deepcopy(base)
    other["metadata"].update(name="argocd-too", generation=3)
    other["spec"]["serviceAccount"]["name"] = "another-installer"
    other["spec"]["source"]["catalog"]["channels"] = ["stable"]
    assert key_of(other) == key_of(base)
    assert content_digest(other) == content_digest(base)
    assert content_digest(extension(**inline(config), progressDeadlineMinutes=30)) != content_digest(base)
    assert content_digest(extension()) != content_digest(base)
    # Respect and Ignore render the same contract: switching between them keeps the revision.
    respect, ignore = (extension(upgrade={"readiness": r}) for r in ("Respect", "Ignore"))
    assert key_of(respect) == key_of(ignore)
    assert content_digest(respect) == content_digest(ignore) != content_digest(extension())


def test_the_memo_answers_only_for_the_key_it_was_given() -> None:
    memo = RenderMemo()
    key = key_of(extension())
    assert memo.lookup("argocd", key) is None
    first = Rendered(digest="sha256:1", properties='[{"type":"t","value":1}]')
    memo.remember("argocd", key, first)
    assert memo.lookup("argocd", key) == first
    assert memo.lookup("argocd", key_of(extension(), OTHER_IMAGE)) is None
    assert memo.lookup("other", key) is None
    memo.remember("argocd", key_of(extension(), OTHER_IMAGE), Rendered(digest="sha256:2", properties=None))
    assert memo.lookup("argocd", key) is None
    memo.forget("argocd")
    assert memo.lookup("argocd", key_of(extension(), OTHER_IMAGE)) is None


RENDERER = renderer(system_namespace="olmv1-system", bundle_webhooks=True)
PROPERTIES = '[{"type":"olm.maxOpenShiftVersion","value":"4.16"}]'
RENDERED = Rendered(digest="sha256:content", properties=PROPERTIES)


def test_the_stored_key_digests_the_inputs_the_renderer_and_the_result() -> None:
    key = key_of(extension())
    stored = stored_key(key, RENDERER, RENDERED)
    assert stored.startswith("sha256:")
    assert stored_key(key_of(extension()), RENDERER, Rendered("sha256:content", PROPERTIES)) == stored
    assert stored_key(key_of(extension(**inline({"watchNamespace": "x"}))), RENDERER, RENDERED) != stored
    assert stored_key(key_of(extension(), OTHER_IMAGE), RENDERER, RENDERED) != stored
    assert stored_key(key, RENDERER, Rendered("sha256:other", PROPERTIES)) != stored
    assert stored_key(key, RENDERER, Rendered("sha256:content", None)) != stored
    for other in (
        renderer(system_namespace="elsewhere", bundle_webhooks=True),
        renderer(system_namespace="olmv1-system", bundle_webhooks=False),
    ):
        assert other != RENDERER
        assert stored_key(key, other, RENDERED) != stored
    assert renderer(system_namespace="olmv1-system", bundle_webhooks=True) == RENDERER


def test_another_olm_version_is_another_renderer(monkeypatch: pytest.MonkeyPatch) -> None:
    # The source digest alone would miss an install of byte-code without its sources.
    monkeypatch.setattr(version, "installed", lambda: "9.9.9")
    assert renderer(system_namespace="olmv1-system", bundle_webhooks=True) != RENDERER


def revision(annotations: dict[str, str]) -> Revision:
    return Revision.of(
        {
            "metadata": {"name": "argocd-1", "annotations": annotations},
            "spec": {"revision": 1, "lifecycleState": "Active"},
        }
    )


def test_a_revision_answers_for_the_render_it_records() -> None:
    key = key_of(extension())
    annotations = {
        names.CONTENT_DIGEST_ANNOTATION: RENDERED.digest,
        names.RENDER_KEY_ANNOTATION: stored_key(key, RENDERER, RENDERED),
        names.PROPERTIES_ANNOTATION: PROPERTIES,
    }
    assert recorded(revision(annotations), key, RENDERER) == RENDERED
    assert recorded(revision(annotations), key_of(extension(namespace="elsewhere")), RENDERER) is None
    assert recorded(revision(annotations), key, renderer(system_namespace="x", bundle_webhooks=True)) is None
    # A bundle without properties: none recorded, none expected.
    bare = Rendered(digest=RENDERED.digest, properties=None)
    without = {
        names.CONTENT_DIGEST_ANNOTATION: bare.digest,
        names.RENDER_KEY_ANNOTATION: stored_key(key, RENDERER, bare),
    }
    assert recorded(revision(without), key, RENDERER) == bare


@pytest.mark.parametrize(
    "edit",
    [
        pytest.param({names.PROPERTIES_ANNOTATION: None}, id="properties removed"),
        pytest.param({names.PROPERTIES_ANNOTATION: "[]"}, id="properties edited"),
        pytest.param({names.CONTENT_DIGEST_ANNOTATION: "sha256:edited"}, id="content digest edited"),
        pytest.param({names.CONTENT_DIGEST_ANNOTATION: None}, id="content digest removed"),
        pytest.param({names.RENDER_KEY_ANNOTATION: None}, id="written by an OLM that records no key"),
    ],
)
def test_an_edited_record_is_rendered_again(edit: dict[str, str | None]) -> None:
    key = key_of(extension())
    annotations: dict[str, str | None] = {
        names.CONTENT_DIGEST_ANNOTATION: RENDERED.digest,
        names.RENDER_KEY_ANNOTATION: stored_key(key, RENDERER, RENDERED),
        names.PROPERTIES_ANNOTATION: PROPERTIES,
        **edit,
    }
    kept = {k: v for k, v in annotations.items() if v is not None}
    assert recorded(revision(kept), key, RENDERER) is None
