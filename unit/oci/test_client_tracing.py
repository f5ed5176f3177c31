"""Registry requests are client spans: one per call, retries included (olm/oci/_transport.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from olm import oci
from olm_runtime import tracing
from unit.oci.fakeregistry import FakeRegistry
from unit.oci.test_client import _catalog, _client, fake
from unit.runtime.controller.conftest import span_exporter

__all__ = ["fake", "span_exporter"]


async def test_a_pull_is_a_client_span_per_registry_request(
    fake: tuple[FakeRegistry, Path], tmp_path: Path, span_exporter: InMemorySpanExporter
) -> None:
    registry, ca = fake
    image = _catalog(tmp_path)
    registry.push("catalogs/demo", "v1", image)
    async with _client(tmp_path, ca) as client:
        with tracing.span("unit/pull") as outer:
            await client.pull(oci.Reference.parse(f"{registry.host}/catalogs/demo:v1"))
    trace_id = outer.get_span_context().trace_id
    calls = [
        s
        for s in span_exporter.get_finished_spans()
        if s.context.trace_id == trace_id and s.kind is trace.SpanKind.CLIENT
    ]
    names = [s.name for s in calls]
    assert names[:2] == ["HEAD /v2/{name}/manifests/{reference}", "GET /v2/{name}/manifests/{reference}"]
    assert set(names[2:]) == {"GET /v2/{name}/blobs/{reference}"}
    for call in calls:
        attributes = call.attributes or {}
        assert attributes["oci.repository"] == "catalogs/demo"
        assert attributes["server.address"] == registry.host
        assert attributes["http.response.status_code"] == 200
        assert call.parent is not None
        assert call.parent.span_id == outer.get_span_context().span_id


async def test_a_failed_registry_request_marks_its_span_failed(
    fake: tuple[FakeRegistry, Path], tmp_path: Path, span_exporter: InMemorySpanExporter
) -> None:
    registry, ca = fake
    async with _client(tmp_path, ca) as client:
        with tracing.span("unit/missing") as outer, pytest.raises(oci.NotFound):
            await client.resolve(oci.Reference.parse(f"{registry.host}/catalogs/absent:v1"))
    trace_id = outer.get_span_context().trace_id
    (call,) = [
        s
        for s in span_exporter.get_finished_spans()
        if s.context.trace_id == trace_id and s.kind is trace.SpanKind.CLIENT
    ]
    assert (call.attributes or {})["http.response.status_code"] == 404
    assert call.status.status_code is trace.StatusCode.ERROR
