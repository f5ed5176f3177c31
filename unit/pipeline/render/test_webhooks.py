"""Webhook bundles: configurations, Services, cert-manager Issuer/Certificate, CA injection, volumes."""

from __future__ import annotations

from typing import Any

import pytest

from olm.pipeline import render
from unit import realdata
from unit.pipeline.render import samples
from unit.pipeline.render.test_validators import webhook

CERT_MANAGER = render.CertManagerProvider()


def _by_kind(objects: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for obj in objects:
        out.setdefault(obj["kind"], []).append(obj)
    return out


def test_webhooks_need_a_certificate_provider() -> None:
    rv1 = samples.make(webhooks=[webhook()])
    with pytest.raises(render.UnsupportedBundleError) as err:
        render.manifests_for(rv1, "ns", None, certificate_provider=None)
    assert (
        str(err.value)
        == "unsupported bundle: webhookDefinitions are not supported: certificate provider is nil"
    )


def test_cert_manager_objects_and_names() -> None:
    rv1 = samples.make(
        deployments=[samples.deployment("sample.controller")],
        webhooks=[
            webhook(deploymentName="sample.controller"),
            webhook(
                "MutatingAdmissionWebhook",
                "mwidget.example.com",
                deploymentName="sample.controller",
                containerPort=9443,
                targetPort="https",
                reinvocationPolicy="IfNeeded",
            ),
        ],
    )
    kinds = _by_kind(render.manifests_for(rv1, "ns", None, certificate_provider=CERT_MANAGER))
    service_name, cert_name = "sample-controller-service", "sample-controller-service-cert"
    [issuer], [certificate] = kinds["Issuer"], kinds["Certificate"]
    assert issuer == {
        "apiVersion": "cert-manager.io/v1",
        "kind": "Issuer",
        "metadata": {"name": f"{cert_name}-selfsigned-issuer", "namespace": "ns"},
        "spec": {"selfSigned": {}},
        "status": {},
    }
    assert certificate["metadata"] == {"name": cert_name, "namespace": "ns"}
    assert certificate["spec"] == {
        "secretName": cert_name,
        "commonName": f"{service_name}.ns",
        "usages": ["server auth"],
        "dnsNames": [f"{service_name}.ns", f"{service_name}.ns.svc", f"{service_name}.ns.svc.cluster.local"],
        "issuerRef": {"name": f"{cert_name}-selfsigned-issuer"},
        "duration": "17520h0m0s",
        "renewBefore": "24h0m0s",
    }
    [service] = kinds["Service"]
    assert service["metadata"] == {"name": service_name, "namespace": "ns"}
    assert service["spec"]["ports"] == [
        {"name": "443", "port": 443, "targetPort": 443},
        {"name": "9443", "port": 9443, "targetPort": "https"},
    ]
    assert service["spec"]["selector"] == {"app": "sample.controller"}
    [validating], [mutating] = kinds["ValidatingWebhookConfiguration"], kinds["MutatingWebhookConfiguration"]
    assert mutating["metadata"]["name"] == mutating["webhooks"][0]["name"] == "mwidget.example.com"
    assert mutating["webhooks"][0]["reinvocationPolicy"] == "IfNeeded"
    for config in (validating, mutating):
        assert config["metadata"]["annotations"] == {
            render.CERT_MANAGER_INJECT_CA_ANNOTATION: f"ns/{cert_name}"
        }
        assert config["webhooks"][0]["clientConfig"]["service"]["name"] == service_name
        assert "namespaceSelector" not in config["webhooks"][0], "AllNamespaces: no namespace selector"


def test_webhook_deployment_gets_certificate_volumes() -> None:
    rv1 = samples.make(
        deployments=[
            samples.deployment(
                volumes=[
                    {"name": "certs", "secret": {"secretName": "mine"}},
                    {"name": "keep", "emptyDir": {}},
                ],
                containers=[
                    {
                        "name": "manager",
                        "image": "i",
                        "volumeMounts": [
                            {"name": "certs", "mountPath": "/tmp/k8s-webhook-server/serving-certs"},
                            {"name": "keep", "mountPath": "/data"},
                        ],
                    }
                ],
            )
        ],
        webhooks=[webhook()],
    )
    [deployment] = _by_kind(render.manifests_for(rv1, "ns", None, certificate_provider=CERT_MANAGER))[
        "Deployment"
    ]
    pod = deployment["spec"]["template"]["spec"]
    secret = "sample-controller-service-cert"
    assert pod["volumes"] == [
        {"name": "keep", "emptyDir": {}},
        {
            "name": "webhook-cert",
            "secret": {
                "secretName": secret,
                "items": [{"key": "tls.crt", "path": "tls.crt"}, {"key": "tls.key", "path": "tls.key"}],
            },
        },
        {
            "name": "apiservice-cert",
            "secret": {
                "secretName": secret,
                "items": [
                    {"key": "tls.crt", "path": "apiserver.crt"},
                    {"key": "tls.key", "path": "apiserver.key"},
                ],
            },
        },
    ]
    assert pod["containers"][0]["volumeMounts"] == [
        {"name": "keep", "mountPath": "/data"},
        {"name": "webhook-cert", "mountPath": "/tmp/k8s-webhook-server/serving-certs"},
        {"name": "apiservice-cert", "mountPath": "/apiserver.local.config/certificates"},
    ]


def test_conversion_webhook_wires_the_crd() -> None:
    rv1 = samples.make(
        owned=["widgets.example.com"],
        webhooks=[
            webhook(
                "ConversionWebhook",
                "cwidget.example.com",
                conversionCRDs=["widgets.example.com"],
                webhookPath="/convert",
            )
        ],
    )
    [crd] = _by_kind(render.manifests_for(rv1, "ns", None, certificate_provider=CERT_MANAGER))[
        "CustomResourceDefinition"
    ]
    assert crd["spec"]["conversion"] == {
        "strategy": "Webhook",
        "webhook": {
            "clientConfig": {
                "service": {
                    "namespace": "ns",
                    "name": "sample-controller-service",
                    "path": "/convert",
                    "port": 443,
                }
            },
            "conversionReviewVersions": ["v1"],
        },
    }
    assert (
        crd["metadata"]["annotations"][render.CERT_MANAGER_INJECT_CA_ANNOTATION]
        == "ns/sample-controller-service-cert"
    )


def test_conversion_crd_must_not_preserve_unknown_fields() -> None:
    crd = samples.crd()
    crd["spec"]["preserveUnknownFields"] = True
    rv1 = samples.make(
        crds=[crd],
        owned=["widgets.example.com"],
        webhooks=[
            webhook("ConversionWebhook", "cwidget.example.com", conversionCRDs=["widgets.example.com"])
        ],
    )
    with pytest.raises(render.RenderError, match=r"must have \.spec\.preserveUnknownFields set to false"):
        render.manifests_for(rv1, "ns", None, certificate_provider=CERT_MANAGER)


def test_namespace_selector_outside_all_namespaces() -> None:
    rv1 = samples.make(modes=("AllNamespaces", "OwnNamespace"), webhooks=[webhook()])
    objects = render.manifests_for(rv1, "ns", {"watchNamespace": "ns"}, certificate_provider=CERT_MANAGER)
    [config] = _by_kind(objects)["ValidatingWebhookConfiguration"]
    assert config["webhooks"][0]["namespaceSelector"] == {
        "matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["ns"]}]
    }


def test_kube_green_real_bundle() -> None:
    realdata.require()
    rv1 = realdata.real_bundle("kube-green", "0.7.1")
    kinds = _by_kind(render.manifests_for(rv1, "kube-green", None, certificate_provider=CERT_MANAGER))
    [config] = kinds["ValidatingWebhookConfiguration"]
    service = config["webhooks"][0]["clientConfig"]["service"]
    assert service["namespace"] == "kube-green"
    assert any(s["metadata"]["name"] == service["name"] for s in kinds["Service"])
    [certificate] = kinds["Certificate"]
    assert config["metadata"]["annotations"][render.CERT_MANAGER_INJECT_CA_ANNOTATION] == (
        f"kube-green/{certificate['metadata']['name']}"
    )
