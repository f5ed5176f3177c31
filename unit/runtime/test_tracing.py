"""Tracing from the standard OTEL_* variables, spans and W3C propagation (olm_runtime/tracing.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from olm_runtime import tracing
from olm_runtime.tracing import Exporter
from unit.runtime.controller.conftest import span_exporter

__all__ = ["span_exporter"]

ENDPOINT = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}


@pytest.mark.parametrize(
    ("environ", "exporters"),
    [
        pytest.param({}, None, id="off-without-an-endpoint"),
        pytest.param(ENDPOINT, (Exporter.OTLP,), id="an-endpoint-turns-otlp-on"),
        pytest.param(
            {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"},
            (Exporter.OTLP,),
            id="a-traces-endpoint-turns-otlp-on",
        ),
        pytest.param({"OTEL_TRACES_EXPORTER": "console"}, (Exporter.CONSOLE,), id="console"),
        pytest.param(
            {"OTEL_TRACES_EXPORTER": "otlp, console"}, (Exporter.OTLP, Exporter.CONSOLE), id="both-exporters"
        ),
        pytest.param({**ENDPOINT, "OTEL_TRACES_EXPORTER": "none"}, None, id="exporter-none-wins"),
        pytest.param({**ENDPOINT, "OTEL_SDK_DISABLED": "true"}, None, id="sdk-disabled-wins"),
        pytest.param({**ENDPOINT, "OTEL_SDK_DISABLED": "false"}, (Exporter.OTLP,), id="sdk-disabled-false"),
        pytest.param(
            {
                **ENDPOINT,
                "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
                "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf",
            },
            (Exporter.OTLP,),
            id="the-traces-protocol-overrides-the-general-one",
        ),
    ],
)
def test_export_settings_follow_the_standard_variables(
    environ: Mapping[str, str], exporters: tuple[Exporter, ...] | None
) -> None:
    assert tracing.export_settings(environ) == exporters


@pytest.mark.parametrize(
    ("environ", "message"),
    [
        pytest.param({**ENDPOINT, "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "http/protobuf", id="grpc"),
        pytest.param({**ENDPOINT, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/json"}, "4318", id="http-json"),
        pytest.param({"OTEL_TRACES_EXPORTER": "zipkin"}, "otlp, console or none", id="unknown-exporter"),
    ],
)
def test_what_is_not_shipped_is_refused_with_what_to_set(environ: Mapping[str, str], message: str) -> None:
    with pytest.raises(tracing.ConfigurationError, match=message):
        tracing.export_settings(environ)


def run_python(code: str, environ: Mapping[str, str]) -> str:
    """Run `code` in a fresh interpreter with only `environ` besides PATH; its stdout."""
    env = {"PATH": os.environ.get("PATH", ""), **environ}
    result = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True, timeout=60
    )
    return result.stdout


def test_off_imports_no_sdk_even_with_both_processes_loaded() -> None:
    code = (
        "import sys\n"
        "import olm.catalogd.main, olm.operator_controller.main\n"
        "from olm_runtime import tracing\n"
        "assert tracing.configure_from_env(service_name='x') is None\n"
        "loaded = [m for m in sys.modules if m.startswith(('opentelemetry.sdk', 'opentelemetry.exporter'))]\n"
        "print(sorted(loaded))\n"
    )
    assert run_python(code, {}).strip() == "[]"


CONSOLE_SCRIPT = (
    "from olm_runtime import tracing\n"
    "provider = tracing.configure_from_env(service_name='from-code')\n"
    "with tracing.span('work', {'step': 'one'}):\n"
    "    pass\n"
    "provider.shutdown()\n"
)


def console_spans(environ: Mapping[str, str]) -> list[dict[str, object]]:
    """The spans the console exporter printed (one JSON document per span)."""
    out = run_python(CONSOLE_SCRIPT, {"OTEL_TRACES_EXPORTER": "console", **environ})
    decoder, spans, index = json.JSONDecoder(), [], 0
    while (index := out.find("{", index)) >= 0:
        span, index = decoder.raw_decode(out, index)
        spans.append(span)
    return spans


@pytest.mark.parametrize(
    ("environ", "service"),
    [
        pytest.param({}, "from-code", id="the-callers-service-name"),
        pytest.param({"OTEL_SERVICE_NAME": "from-env"}, "from-env", id="otel-service-name-wins"),
        pytest.param(
            {"OTEL_RESOURCE_ATTRIBUTES": "service.name=attr,deployment.environment=test"},
            "attr",
            id="resource-attributes-win",
        ),
    ],
)
def test_the_resource_comes_from_the_environment_then_the_caller(
    environ: Mapping[str, str], service: str
) -> None:
    (span,) = console_spans(environ)
    resource = span["resource"]
    assert isinstance(resource, dict)
    assert resource["attributes"]["service.name"] == service
    assert span["name"] == "work"


def test_the_sampler_comes_from_the_environment() -> None:
    assert console_spans({"OTEL_TRACES_SAMPLER": "always_off"}) == []


def test_span_records_an_exception_and_marks_the_span_failed(span_exporter: InMemorySpanExporter) -> None:
    with pytest.raises(KeyError), tracing.span("unit/failing", {"catalog": "c"}):
        raise KeyError("spec")
    (span,) = [s for s in span_exporter.get_finished_spans() if s.name == "unit/failing"]
    assert span.status.status_code is trace.StatusCode.ERROR
    assert [e.name for e in span.events] == ["exception"]
    assert dict(span.attributes or {}) == {"catalog": "c"}


def test_inject_and_extract_make_the_server_span_the_callers_child(
    span_exporter: InMemorySpanExporter,
) -> None:
    headers: dict[str, str] = {}
    with tracing.span("unit/client", kind=trace.SpanKind.CLIENT) as client:
        tracing.inject(headers)
    with tracing.tracer().start_as_current_span("unit/server", context=tracing.extract(headers)):
        pass
    (server,) = [s for s in span_exporter.get_finished_spans() if s.name == "unit/server"]
    client_context = client.get_span_context()
    assert headers["traceparent"].split("-")[1:3] == [
        format(client_context.trace_id, "032x"),
        format(client_context.span_id, "016x"),
    ]
    assert server.parent is not None
    assert (server.parent.trace_id, server.parent.span_id) == (
        client_context.trace_id,
        client_context.span_id,
    )


def test_extract_without_traceparent_starts_a_new_trace(span_exporter: InMemorySpanExporter) -> None:
    with (
        tracing.span("unit/outer"),
        tracing.tracer().start_as_current_span("unit/root", context=tracing.extract({})),
    ):
        pass
    (root,) = [s for s in span_exporter.get_finished_spans() if s.name == "unit/root"]
    assert root.parent is None


def test_log_ids_are_the_current_spans_in_hex(span_exporter: InMemorySpanExporter) -> None:
    assert tracing.log_ids() == {}
    with tracing.span("unit/logged") as current:
        ids = tracing.log_ids()
    context = current.get_span_context()
    assert ids == {"trace_id": format(context.trace_id, "032x"), "span_id": format(context.span_id, "016x")}
