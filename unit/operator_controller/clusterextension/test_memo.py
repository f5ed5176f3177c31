"""The steady-reconcile memo: its key changes with every input of a revision's content, and only then."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from olm.api.extensionspec import ExtensionSpec, Readiness
from olm.operator_controller import applier
from olm.operator_controller.applier import revisions
from olm.operator_controller.clusterextension.memo import Rendered, RenderKey, RenderMemo, render_key
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
