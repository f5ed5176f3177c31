"""catalogd's content server continues the caller's trace: one server span per request, the child
of the span its `traceparent` names (olm/catalogd/server.py)."""

from __future__ import annotations

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from olm_runtime import tracing
from olm_runtime.testing.poll import eventually
from unit.catalogd.serving import Served
from unit.catalogd.test_server import served
from unit.runtime.controller.conftest import span_exporter

__all__ = ["served", "span_exporter"]

METAS_ROUTE = "/catalogs/{name}/api/v1/metas"


def server_spans(exporter: InMemorySpanExporter) -> list[ReadableSpan]:
    return [s for s in exporter.get_finished_spans() if s.kind is trace.SpanKind.SERVER]


async def test_a_request_with_a_traceparent_is_served_in_a_child_span(
    served: Served, span_exporter: InMemorySpanExporter
) -> None:
    headers: dict[str, str] = {}
    with tracing.span("unit/catalog read", kind=trace.SpanKind.CLIENT) as client:
        tracing.inject(headers)
        async with served.session.get(f"{served.base}/demo/api/v1/metas?package=alpha", headers=headers) as r:
            await r.read()

    async def span_ended() -> bool:  # the span ends after the handler returns: the client may be faster
        return bool(server_spans(span_exporter))

    await eventually(span_ended, what="the server span", timeout=10, interval=0.01)
    server = server_spans(span_exporter)[-1]
    assert server.name == f"GET {METAS_ROUTE}"
    assert server.parent is not None
    assert (server.parent.trace_id, server.parent.span_id) == (
        client.get_span_context().trace_id,
        client.get_span_context().span_id,
    )
    assert dict(server.attributes or {}) == {
        "http.request.method": "GET",
        "http.route": METAS_ROUTE,
        "url.path": "/catalogs/demo/api/v1/metas",
        "url.query": "package=alpha",
        "user_agent.original": r.request_info.headers.get("User-Agent", ""),
        "olm.catalog": "demo",
        "http.response.status_code": 200,
    }
    assert server.status.status_code is trace.StatusCode.UNSET


async def test_a_client_error_is_recorded_but_does_not_fail_the_server_span(
    served: Served, span_exporter: InMemorySpanExporter
) -> None:
    async with served.session.get(f"{served.base}/missing/api/v1/all") as response:
        assert response.status == 404
    server = server_spans(span_exporter)[-1]
    assert server.parent is None, "no traceparent: a trace of its own"
    assert (server.attributes or {})["http.response.status_code"] == 404
    assert server.status.status_code is trace.StatusCode.UNSET
