"""Reading the collector's file exporter output (olm_runtime/testing/collector.py)."""

from __future__ import annotations

import json
from pathlib import Path

from olm_testkit.collector import Collector, CollectorOptions, Span, parse_line

# One line as the collector's file exporter writes it (OTLP JSON), trimmed to two spans.
LINE = json.dumps(
    {
        "resourceSpans": [
            {
                "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "catalogd"}}]},
                "scopeSpans": [
                    {
                        "scope": {"name": "olm_runtime"},
                        "spans": [
                            {
                                "traceId": "18a4b9aa6f3f6f1586c9efe4b2f66bf3",
                                "spanId": "a34ecf9e36f49a3f",
                                "parentSpanId": "d2c7bbd706a9e7f5",
                                "name": "GET /catalogs/{name}/api/v1/metas",
                                "kind": 2,
                                "startTimeUnixNano": "1795687256785473135",
                                "endTimeUnixNano": "1795687256785561921",
                                "attributes": [
                                    {"key": "http.response.status_code", "value": {"intValue": "200"}},
                                    {"key": "olm.catalog", "value": {"stringValue": "operatorhub"}},
                                    {"key": "sampled", "value": {"boolValue": True}},
                                ],
                                "status": {"code": 2},
                            },
                            {
                                "traceId": "18a4b9aa6f3f6f1586c9efe4b2f66bf3",
                                "spanId": "d2c7bbd706a9e7f5",
                                "name": "root",
                                "kind": 1,
                                "startTimeUnixNano": "1",
                                "endTimeUnixNano": "2",
                                "status": {},
                            },
                        ],
                    }
                ],
            }
        ]
    }
)


def test_a_line_is_read_into_spans_with_typed_attributes() -> None:
    served, root = parse_line(LINE)
    assert served == Span(
        service="catalogd",
        trace_id="18a4b9aa6f3f6f1586c9efe4b2f66bf3",
        span_id="a34ecf9e36f49a3f",
        parent_span_id="d2c7bbd706a9e7f5",
        name="GET /catalogs/{name}/api/v1/metas",
        kind=2,
        start_ns=1795687256785473135,
        end_ns=1795687256785561921,
        attributes={"http.response.status_code": 200, "olm.catalog": "operatorhub", "sampled": True},
        status_code=2,
    )
    assert (root.parent_span_id, root.attributes, root.status_code) == ("", {}, 0)


def test_a_line_still_being_written_is_left_for_the_next_read(tmp_path: Path) -> None:
    collector = Collector(CollectorOptions(binary=tmp_path / "otelcol", state_dir=tmp_path))
    collector.traces_file.write_text(LINE + "\n" + LINE[:40])
    assert [s.name for s in collector.spans()] == ["GET /catalogs/{name}/api/v1/metas", "root"]
