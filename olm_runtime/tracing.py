"""OpenTelemetry spans around reconciles and outbound calls, exported when the environment says so.

The runtime creates spans only through the OpenTelemetry API's global tracer provider. Until a
process installs one, every span is the API's no-op span: the SDK is not even imported. A process
turns export on with the standard `OTEL_*` variables and one call at start-up:

    provider = tracing.configure_from_env(service_name="my-operator")
    try:
        ...  # run the manager
    finally:
        if provider is not None:
            provider.shutdown()  # flushes spans still queued

`configure_from_env` exports when `OTEL_TRACES_EXPORTER` names `otlp` or `console`, or, with that
unset, when `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set; it does
nothing when `OTEL_SDK_DISABLED=true` or the exporter is `none`. OTLP goes over HTTP/protobuf
(`OTEL_EXPORTER_OTLP[_TRACES]_PROTOCOL` may say `http/protobuf`, nothing else is shipped). The
SDK reads the rest of the standard variables itself: endpoint, headers, timeout, compression and
certificates of the exporter, `OTEL_TRACES_SAMPLER`/`OTEL_TRACES_SAMPLER_ARG`,
`OTEL_RESOURCE_ATTRIBUTES`, `OTEL_SERVICE_NAME` (which wins over `service_name`) and the batch
processor's `OTEL_BSP_*`.

What the runtime traces (every span is a child of the span current where it starts):
- `reconcile <controller>`: one per reconcile, with `controller`, `object.kind` (when the
  controller knows it), `object.namespace` (namespaced objects only), `object.name` and `reconcile.id`;
- `<controller>/<step>`: one per step of a `controller.Steps` pipeline;
- `<verb> <resource>` client spans: one per API server request made inside another span (watches
  are not traced: they last minutes).

Embedders add their own spans with `span(name, attributes)`, and carry a trace across their own
HTTP hops with `inject` (client side) and `extract` (server side).
"""

from __future__ import annotations

import contextlib
import enum
import os
from collections.abc import Iterator, Mapping, MutableMapping
from typing import TYPE_CHECKING

from opentelemetry import context, trace
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
from opentelemetry.util.types import AttributeValue

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SpanExporter

__all__ = [
    "TRACER_NAME",
    "ConfigurationError",
    "Exporter",
    "configure",
    "configure_from_env",
    "export_settings",
    "extract",
    "inject",
    "log_ids",
    "span",
    "tracer",
]

TRACER_NAME = "olm_runtime"
HTTP_PROTOBUF = "http/protobuf"
# W3C Trace Context, used directly rather than through the OTEL_PROPAGATORS registry: both ends
# are this project's processes, and the registry loads entry points at import.
_PROPAGATOR = TraceContextTextMapPropagator()


class ConfigurationError(ValueError):
    """The `OTEL_*` variables ask for something this process cannot do; the message says what."""


class Exporter(enum.Enum):
    OTLP = "otlp"
    CONSOLE = "console"


def tracer() -> trace.Tracer:
    return trace.get_tracer(TRACER_NAME)


@contextlib.contextmanager
def span(
    name: str,
    attributes: Mapping[str, AttributeValue] | None = None,
    *,
    kind: trace.SpanKind = trace.SpanKind.INTERNAL,
) -> Iterator[trace.Span]:
    """A span named `name`, current inside the block, a child of the span current outside it. An
    exception leaving the block is recorded on it and sets its status to error."""
    with tracer().start_as_current_span(name, kind=kind, attributes=attributes) as current:
        yield current


def inject(headers: MutableMapping[str, str]) -> None:
    """Add the current span's W3C `traceparent` (and `tracestate`) to outgoing request `headers`."""
    _PROPAGATOR.inject(headers)


def extract(headers: Mapping[str, str]) -> context.Context:
    """The context an incoming request's `traceparent` names; pass it as a server span's `context`
    so the span is the caller's child (an empty context when the request carries none)."""
    return _PROPAGATOR.extract(headers)


def _true(value: str | None) -> bool:
    return (value or "").strip().lower() == "true"


def export_settings(environ: Mapping[str, str]) -> tuple[Exporter, ...] | None:
    """The exporters `environ` asks for, decided without importing the SDK, or None when tracing
    stays off (see the module docstring).

    Raises `ConfigurationError` for an exporter or OTLP protocol this process does not ship.
    """
    if _true(environ.get("OTEL_SDK_DISABLED")):
        return None
    names_value = environ.get("OTEL_TRACES_EXPORTER", "").strip()
    if not names_value:
        endpoint = environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or environ.get(
            "OTEL_EXPORTER_OTLP_ENDPOINT"
        )
        names_value = "otlp" if endpoint else "none"
    names = [name.strip().lower() for name in names_value.split(",") if name.strip()]
    if "none" in names:
        return None
    exporters: list[Exporter] = []
    for name in names:
        try:
            exporters.append(Exporter(name))
        except ValueError:
            raise ConfigurationError(
                f"OTEL_TRACES_EXPORTER: unsupported exporter {name!r}: use otlp, console or none"
            ) from None
    if Exporter.OTLP in exporters:
        protocol = (
            environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
            or environ.get("OTEL_EXPORTER_OTLP_PROTOCOL")
            or HTTP_PROTOBUF
        ).strip()
        if protocol != HTTP_PROTOBUF:
            raise ConfigurationError(
                f"OTLP protocol {protocol!r} is not supported: set OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf "
                "and point the endpoint at the collector's OTLP/HTTP port (4318 by default)"
            )
    return tuple(dict.fromkeys(exporters))


# The SDK and exporter modules are imported only once tracing is on: a process that does not
# trace pays for the API alone (see docs/observability/tracing.md for the figures).


def _exporter(kind: Exporter) -> SpanExporter:
    if kind is Exporter.OTLP:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import (  # noqa: PLC0415
            OTLPSpanExporter,
        )

        return OTLPSpanExporter()
    from opentelemetry.sdk.trace.export import ConsoleSpanExporter  # noqa: PLC0415

    return ConsoleSpanExporter()


def configure_from_env(
    *, service_name: str, environ: Mapping[str, str] | None = None
) -> TracerProvider | None:
    """Install a tracer provider exporting as the `OTEL_*` variables say, and return it so the
    caller can `shutdown()` (flush) it at exit; None, with nothing imported, when tracing is off.

    `service_name` is the `service.name` resource attribute unless `OTEL_SERVICE_NAME` or
    `OTEL_RESOURCE_ATTRIBUTES` set one. Raises `ConfigurationError` (see `export_settings`).
    """
    exporters = export_settings(os.environ if environ is None else environ)
    if exporters is None:
        return None
    return configure(*(_exporter(kind) for kind in exporters), service_name=service_name)


def configure(*exporters: SpanExporter, service_name: str) -> TracerProvider:
    """Install a tracer provider batching every span to each of `exporters`; return it (to shut
    down). The sampler and resource come from the `OTEL_*` variables as in `configure_from_env`."""
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource  # noqa: PLC0415
    from opentelemetry.sdk.trace import TracerProvider  # noqa: PLC0415
    from opentelemetry.sdk.trace.export import BatchSpanProcessor  # noqa: PLC0415

    resource = Resource.create()
    if str(resource.attributes.get(SERVICE_NAME, "")).startswith("unknown_service"):
        resource = resource.merge(Resource({SERVICE_NAME: service_name}))
    # The caller shuts the provider down; an atexit hook would run it a second time.
    provider = TracerProvider(resource=resource, shutdown_on_exit=False)
    for exporter in exporters:
        provider.add_span_processor(BatchSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    return provider


def log_ids() -> dict[str, str]:
    """`trace_id` and `span_id` of the current span, as hex the way backends show them; empty
    outside a recorded span."""
    context = trace.get_current_span().get_span_context()
    if not context.is_valid:
        return {}
    return {"trace_id": format(context.trace_id, "032x"), "span_id": format(context.span_id, "016x")}
