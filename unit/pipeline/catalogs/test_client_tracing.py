"""The catalog client's requests are client spans whose trace catalogd's content server continues
(olm/pipeline/catalogs/_client.py, against the real content server on loopback)."""

from __future__ import annotations

from opentelemetry import trace
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from olm.pipeline import catalogs
from olm_runtime import tracing
from unit.pipeline.catalogs.serving import Running
from unit.pipeline.catalogs.test_client import _ref, running
from unit.runtime.controller.conftest import span_exporter

__all__ = ["running", "span_exporter"]


async def test_each_request_is_a_client_span_and_catalogds_server_span_is_its_child(
    running: Running, span_exporter: InMemorySpanExporter
) -> None:
    client = catalogs.CatalogClient(catalogs.ClientOptions(ca_file=running.ca_file))
    try:
        with tracing.span("unit/resolve") as outer:
            await client.get_package(_ref(running), "kube-green")
    finally:
        await client.close()
    trace_id = outer.get_span_context().trace_id
    spans = [s for s in span_exporter.get_finished_spans() if s.context.trace_id == trace_id]
    calls = [s for s in spans if s.kind is trace.SpanKind.CLIENT]
    served = [s for s in spans if s.kind is trace.SpanKind.SERVER]
    assert [s.name for s in calls] == ["GET catalogd metas", "GET catalogd metas"]
    for call in calls:
        assert call.parent is not None
        assert call.parent.span_id == outer.get_span_context().span_id
        attributes = call.attributes or {}
        assert attributes["olm.catalog"] == "community"
        assert attributes["http.response.status_code"] == 200
        assert str(attributes["url.full"]).startswith(running.base("community"))
    assert sorted(s.parent.span_id for s in served if s.parent is not None) == sorted(
        c.context.span_id for c in calls
    )
