"""The validators upstream runs before rendering, with upstream's messages; all failures at once."""

from __future__ import annotations

from typing import Any

import pytest

from olm.pipeline import render
from unit.pipeline.render import samples

DNS = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)


def webhook(
    kind: str = "ValidatingAdmissionWebhook", name: str = "vwidget.example.com", **extra: Any
) -> dict[str, Any]:
    hook = {
        "type": kind,
        "generateName": name,
        "deploymentName": "sample-controller",
        "containerPort": 443,
        "admissionReviewVersions": ["v1"],
        "sideEffects": "None",
        "rules": [
            {
                "apiGroups": ["example.com"],
                "apiVersions": ["v1"],
                "operations": ["CREATE"],
                "resources": ["widgets"],
            }
        ],
    }
    hook.update(extra)
    return hook


CASES = [
    pytest.param(
        {"deployments": [samples.deployment("dup"), samples.deployment("dup")]},
        ["cluster service version contains duplicate strategy deployment spec 'dup'"],
        id="duplicate-deployments",
    ),
    pytest.param(
        {"deployments": [samples.deployment("Bad_Name")]},
        [f"invalid cluster service version strategy deployment name 'Bad_Name': {DNS}"],
        id="deployment-name-not-dns1123",
    ),
    pytest.param(
        {"crds": [samples.crd(), samples.crd()]},
        ["bundle contains duplicate custom resource definition 'widgets.example.com'"],
        id="duplicate-crds",
    ),
    pytest.param(
        {"owned": ["widgets.example.com", "gadgets.example.com"]},
        [
            "cluster service definition references owned custom resource definition "
            "'gadgets.example.com' not found in bundle"
        ],
        id="owned-crd-missing",
    ),
    pytest.param({"package": ""}, ["package name is empty"], id="empty-package"),
    pytest.param(
        {
            "modes": ("AllNamespaces", "OwnNamespace"),
            "webhooks": [
                webhook("ConversionWebhook", "cwidget.example.com", conversionCRDs=["widgets.example.com"])
            ],
            "owned": ["widgets.example.com"],
        },
        [
            'bundle contains conversion webhook "cwidget.example.com" and supports install modes '
            "[AllNamespaces "
            "OwnNamespace] - conversion webhooks are only supported for bundles that only support "
            "AllNamespaces "
            "install mode"
        ],
        id="conversion-webhook-needs-all-namespaces-only",
    ),
    pytest.param(
        {"webhooks": [webhook(deploymentName="nowhere")]},
        [
            "webhook of type 'ValidatingAdmissionWebhook' with name 'vwidget.example.com' references "
            "non-existent "
            "deployment 'nowhere'"
        ],
        id="webhook-deployment-missing",
    ),
    pytest.param(
        {"webhooks": [webhook(), webhook(), webhook("MutatingAdmissionWebhook")]},
        ["duplicate webhook 'vwidget.example.com' of type 'ValidatingAdmissionWebhook'"],
        id="duplicate-webhooks-per-type",
    ),
    pytest.param(
        {"webhooks": [webhook(name="Bad_Hook")]},
        [f"webhook of type 'ValidatingAdmissionWebhook' has invalid name 'Bad_Hook': {DNS}"],
        id="webhook-name-not-dns1123",
    ),
    pytest.param(
        {
            "webhooks": [
                webhook("ConversionWebhook", "a.example.com", conversionCRDs=["widgets.example.com"]),
                webhook("ConversionWebhook", "b.example.com", conversionCRDs=["widgets.example.com"]),
            ],
            "owned": ["widgets.example.com"],
        },
        [
            "conversion webhooks [a.example.com,b.example.com] reference same custom resource "
            "definition 'widgets.example.com'"
        ],
        id="conversion-webhooks-share-a-crd",
    ),
    pytest.param(
        {"webhooks": [webhook("ConversionWebhook", "c.example.com", conversionCRDs=["widgets.example.com"])]},
        [
            "conversion webhook 'c.example.com' references custom resource definition "
            "'widgets.example.com' not owned bundle"
        ],
        id="conversion-webhook-crd-not-owned",
    ),
    pytest.param(
        {
            "webhooks": [
                webhook(rules=[{"apiGroups": ["*"], "resources": ["x"]}]),
                webhook(
                    "MutatingAdmissionWebhook",
                    "m.example.com",
                    rules=[{"apiGroups": ["olm.operatorframework.io"]}],
                ),
                webhook(
                    name="a.example.com",
                    rules=[
                        {
                            "apiGroups": ["admissionregistration.k8s.io"],
                            "resources": ["ValidatingWebhookConfigurations", "*"],
                        }
                    ],
                ),
            ]
        },
        [
            'webhook "vwidget.example.com" contains forbidden rule: admission webhook rules cannot '
            'reference API group "*"',
            'webhook "m.example.com" contains forbidden rule: admission webhook rules cannot reference '
            "API group "
            '"olm.operatorframework.io"',
            'webhook "a.example.com" contains forbidden rule: admission webhook rules cannot reference '
            "resource "
            '"ValidatingWebhookConfigurations" for API group "admissionregistration.k8s.io"',
            'webhook "a.example.com" contains forbidden rule: admission webhook rules cannot reference '
            'resource "*" '
            'for API group "admissionregistration.k8s.io"',
        ],
        id="forbidden-webhook-rules",
    ),
    pytest.param(
        {"others": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "ds"}}]},
        ['unsupported resource "ds" with kind "DaemonSet"'],
        id="unsupported-kind",
    ),
    pytest.param(
        {"others": [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "date": {}}]},
        ['ConfigMap "c" has unknown field "date": the API server would reject it'],
        id="builtin-kind-unknown-field",
    ),
    pytest.param(
        {"package": "", "deployments": [samples.deployment("dup"), samples.deployment("dup")]},
        [
            "cluster service version contains duplicate strategy deployment spec 'dup'",
            "package name is empty",
        ],
        id="all-failures-together",
    ),
]


@pytest.mark.parametrize(("args", "messages"), CASES)
def test_validators(args: dict[str, Any], messages: list[str]) -> None:
    rv1 = samples.make(**args)
    with pytest.raises(render.RenderError) as err:
        render.validate(rv1)
    assert str(err.value).split("\n") == messages
    with pytest.raises(render.RenderError):
        render.render(rv1, "ns")


def test_a_valid_bundle_passes() -> None:
    render.validate(samples.make(owned=["widgets.example.com"], webhooks=[webhook()]))


def test_every_supported_kind_is_classified() -> None:
    assert render.SUPPORTED_KINDS["ConfigMap"] is True
    assert render.SUPPORTED_KINDS["ClusterRole"] is False
    assert render.SUPPORTED_KINDS["NetworkPolicy"] is True
    assert "Deployment" not in render.SUPPORTED_KINDS
