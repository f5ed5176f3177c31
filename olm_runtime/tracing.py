"""OpenTelemetry spans around reconciles and outbound calls.

The runtime only creates spans through the global tracer provider; a process that wants them
exported configures a provider (e.g. `configure()` with an exporter). Without one, spans are
no-ops and cost next to nothing.
"""

from __future__ import annotations

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter

TRACER_NAME = "olm_runtime"


def tracer() -> trace.Tracer:
    return trace.get_tracer(TRACER_NAME)


def configure(exporter: SpanExporter, *, service_name: str) -> TracerProvider:
    """Install a tracer provider exporting every span to `exporter`; return it (to shut down)."""
    provider = TracerProvider(resource=Resource.create({"service.name": service_name}))
    provider.add_span_processor(BatchSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    return provider
