"""Client spans of API server requests: what a request is (verb, resource, namespace, name) and
the span the transport makes for it inside another span (olm_runtime/client/_spans.py)."""

from __future__ import annotations

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from olm_runtime import tracing
from olm_runtime.client import Transport, errors
from olm_runtime.client._spans import Call, describe
from unit.runtime.controller.conftest import span_exporter

from .stub import Stub, json_response
from .test_errors import NOT_FOUND

__all__ = ["span_exporter"]


@pytest.mark.parametrize(
    ("method", "path", "params", "call"),
    [
        pytest.param(
            "GET",
            "/api/v1/namespaces/ns/configmaps/cm",
            None,
            Call(verb="get", resource="configmaps", namespace="ns", name="cm"),
            id="get",
        ),
        pytest.param(
            "GET",
            "/api/v1/namespaces/ns/pods",
            None,
            Call(verb="list", resource="pods", namespace="ns", name=""),
            id="list",
        ),
        pytest.param(
            "GET",
            "/apis/olm.operatorframework.io/v1/clusterextensions",
            {"watch": "true"},
            Call(verb="watch", resource="clusterextensions", namespace="", name=""),
            id="watch",
        ),
        pytest.param(
            "PATCH",
            "/apis/olm.operatorframework.io/v1/clusterextensions/e/status",
            None,
            Call(verb="patch", resource="clusterextensions/status", namespace="", name="e"),
            id="status-subresource",
        ),
        pytest.param(
            "POST",
            "/apis/olm.operatorframework.io/v1/clusterobjectsets",
            None,
            Call(verb="create", resource="clusterobjectsets", namespace="", name=""),
            id="create-cluster-scoped",
        ),
        pytest.param(
            "POST",
            "/api/v1/namespaces/ns/serviceaccounts/sa/token",
            None,
            Call(verb="create", resource="serviceaccounts/token", namespace="ns", name="sa"),
            id="token-request",
        ),
        pytest.param(
            "PUT",
            "/api/v1/namespaces/ns",
            None,
            Call(verb="update", resource="namespaces", namespace="ns", name="ns"),
            id="namespace-object",
        ),
        pytest.param(
            "DELETE",
            "/api/v1/namespaces/ns/secrets",
            None,
            Call(verb="deletecollection", resource="secrets", namespace="ns", name=""),
            id="deletecollection",
        ),
        pytest.param(
            "GET", "/apis/apps/v1", None, Call(verb="get", resource="", namespace="", name=""), id="discovery"
        ),
        pytest.param(
            "GET", "/version", None, Call(verb="get", resource="", namespace="", name=""), id="non-resource"
        ),
    ],
)
def test_a_request_is_described_as_the_authorizer_sees_it(
    method: str, path: str, params: dict[str, str] | None, call: Call
) -> None:
    assert describe(method, path, params) == call


async def test_a_request_inside_a_span_gets_a_client_span_with_its_status(
    stub: Stub, transport: Transport, span_exporter: InMemorySpanExporter
) -> None:
    stub.respond(json_response(b"{}"), json_response(NOT_FOUND, status=404))
    with tracing.span("unit/reconcile") as parent:
        await transport.request("GET", "/api/v1/namespaces/ns/configmaps/found")
        with pytest.raises(errors.NotFound):
            await transport.request("GET", "/api/v1/namespaces/ns/configmaps/missing")
    found, missing = [s for s in span_exporter.get_finished_spans() if s.name == "get configmaps"][-2:]
    for span in (found, missing):
        assert span.kind is trace.SpanKind.CLIENT
        assert span.parent is not None
        assert span.parent.span_id == parent.get_span_context().span_id
    port = int(stub.url.rsplit(":", 1)[1])
    assert dict(found.attributes or {}) == {
        "http.request.method": "GET",
        "server.address": "127.0.0.1",
        "server.port": port,
        "url.path": "/api/v1/namespaces/ns/configmaps/found",
        "k8s.verb": "get",
        "k8s.resource": "configmaps",
        "k8s.namespace.name": "ns",
        "k8s.object.name": "found",
        "http.response.status_code": 200,
    }
    assert found.status.status_code is trace.StatusCode.UNSET
    assert (missing.attributes or {})["http.response.status_code"] == 404
    assert (missing.attributes or {})["error.type"] == "404"
    assert missing.status.status_code is trace.StatusCode.ERROR


async def test_a_request_outside_any_span_makes_none(
    stub: Stub, transport: Transport, span_exporter: InMemorySpanExporter
) -> None:
    stub.respond(json_response(b"{}"))
    before = len(span_exporter.get_finished_spans())
    await transport.request("GET", "/api/v1/namespaces/ns/configmaps/lease")
    assert len(span_exporter.get_finished_spans()) == before
