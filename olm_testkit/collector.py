"""A real OpenTelemetry Collector on loopback that writes every span it receives to a file.

The collector (`otelcol` in the binary directory, built by `hack/controlplane` from the pinned
collector modules: the OTLP receiver and the file exporter, nothing else) listens for OTLP over
HTTP on a free loopback port and appends each batch it receives to `traces.jsonl` as one line of
OTLP JSON. Point a process at it with `collector.environment()`, then read what arrived with
`collector.spans()`:

    with Collector(CollectorOptions(binary=bin_dir / "otelcol", state_dir=tmp)) as collector:
        start_process(env={**os.environ, **collector.environment()})
        ...
        spans = collector.spans()
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from olm_runtime.testing import process

__all__ = ["Collector", "CollectorOptions", "Span"]


@dataclass(frozen=True, kw_only=True)
class CollectorOptions:
    binary: Path
    """The collector executable (`<binary dir>/otelcol`)."""
    state_dir: Path
    """Configuration, log and the exported `traces.jsonl`; emptied at start."""
    start_timeout: float = 30.0
    flush_interval_ms: int = 100
    """How often the file exporter flushes to disk."""


@dataclass(frozen=True, kw_only=True)
class Span:
    """One exported span, read from OTLP JSON (IDs as lowercase hex, times in nanoseconds)."""

    service: str
    """The `service.name` of the process that sent it."""
    trace_id: str
    span_id: str
    parent_span_id: str
    """Empty for a trace's root span."""
    name: str
    kind: int
    """OTLP's SpanKind: 1 internal, 2 server, 3 client."""
    start_ns: int
    end_ns: int
    attributes: Mapping[str, Any]
    status_code: int
    """OTLP's StatusCode: 0 unset, 1 ok, 2 error."""


def _value(value: Mapping[str, Any]) -> Any:
    """The Python value of an OTLP JSON `AnyValue` (64-bit integers arrive as strings)."""
    if "intValue" in value:
        return int(value["intValue"])
    if "arrayValue" in value:
        return [_value(v) for v in value["arrayValue"].get("values", [])]
    for key in ("stringValue", "boolValue", "doubleValue"):
        if key in value:
            return value[key]
    return None


def _attributes(items: list[Mapping[str, Any]] | None) -> dict[str, Any]:
    return {item["key"]: _value(item.get("value") or {}) for item in items or ()}


def parse_line(line: str) -> Iterator[Span]:
    """The spans of one line of the file exporter's output (an OTLP `ExportTraceServiceRequest`)."""
    for resource_spans in json.loads(line).get("resourceSpans", []):
        resource = _attributes((resource_spans.get("resource") or {}).get("attributes"))
        for scope_spans in resource_spans.get("scopeSpans", []):
            for span in scope_spans.get("spans", []):
                yield Span(
                    service=str(resource.get("service.name", "")),
                    trace_id=span["traceId"],
                    span_id=span["spanId"],
                    parent_span_id=span.get("parentSpanId", ""),
                    name=span["name"],
                    kind=int(span.get("kind", 0)),
                    start_ns=int(span["startTimeUnixNano"]),
                    end_ns=int(span["endTimeUnixNano"]),
                    attributes=_attributes(span.get("attributes")),
                    status_code=int((span.get("status") or {}).get("code", 0)),
                )


class Collector:
    """Use as a context manager: started on entry, stopped on exit."""

    def __init__(self, options: CollectorOptions) -> None:
        self.options = options
        self._pid: int | None = None
        self._port: int | None = None

    @property
    def traces_file(self) -> Path:
        return self.options.state_dir / "traces.jsonl"

    @property
    def _log(self) -> Path:
        return self.options.state_dir / "otelcol.log"

    @property
    def endpoint(self) -> str:
        """The OTLP/HTTP base URL (`OTEL_EXPORTER_OTLP_ENDPOINT`)."""
        if self._port is None:
            raise RuntimeError("the collector is not up")
        return f"http://127.0.0.1:{self._port}"

    def environment(self, *, schedule_delay_ms: int = 200) -> dict[str, str]:
        """The `OTEL_*` variables that make a process export its spans here, batched every
        `schedule_delay_ms` so a test sees them soon."""
        return {
            "OTEL_EXPORTER_OTLP_ENDPOINT": self.endpoint,
            "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
            "OTEL_BSP_SCHEDULE_DELAY": str(schedule_delay_ms),
        }

    def spans(self) -> list[Span]:
        """Every span written so far (a line still being written is left for the next call)."""
        try:
            text = self.traces_file.read_text()
        except FileNotFoundError:
            return []
        complete = text[: text.rfind("\n") + 1]
        return [span for line in complete.splitlines() if line.strip() for span in parse_line(line)]

    def __enter__(self) -> Collector:
        state = self.options.state_dir
        if state.exists():
            shutil.rmtree(state)
        state.mkdir(parents=True)
        (self._port,) = process.free_ports(1)
        config = {
            "receivers": {"otlp": {"protocols": {"http": {"endpoint": f"127.0.0.1:{self._port}"}}}},
            "exporters": {
                "file": {
                    "path": str(self.traces_file),
                    "flush_interval": f"{self.options.flush_interval_ms}ms",
                }
            },
            "service": {
                # No self-telemetry: it would listen on a fixed port (8888) of its own.
                "telemetry": {"metrics": {"level": "none"}, "logs": {"level": "warn"}},
                "pipelines": {"traces": {"receivers": ["otlp"], "exporters": ["file"]}},
            },
        }
        config_file = state / "config.yaml"
        config_file.write_text(json.dumps(config))  # YAML is a superset of JSON
        self._pid = process.spawn(
            [str(self.options.binary), f"--config={config_file}"], log_file=self._log, tie_to_parent=True
        )
        port = self._port
        try:
            process.wait_until(
                lambda: process.port_is_listening(port),
                timeout=self.options.start_timeout,
                what="the OpenTelemetry Collector to listen",
                alive=self._check,
            )
        except BaseException:
            self._stop()
            raise
        return self

    def __exit__(
        self, _: type[BaseException] | None, __: BaseException | None, ___: TracebackType | None
    ) -> None:
        self._stop()

    def _check(self) -> None:
        if self._pid is not None and not process.is_alive(self._pid):
            raise process.ComponentFailure(f"the collector died:\n{process.log_tail(self._log)}")

    def _stop(self) -> None:
        if self._pid is not None:
            process.stop(self._pid)
            self._pid = None
