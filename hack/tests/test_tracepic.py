"""The trace picture: which trace is drawn and in what order (hack/tracepic.py)."""

from __future__ import annotations

from hack import tracepic
from olm_testkit.collector import Span


def span(
    name: str,
    span_id: str,
    parent: str = "",
    *,
    trace: str = "t1",
    service: str = "operator-controller",
    start: int = 0,
) -> Span:
    return Span(
        service=service,
        trace_id=trace,
        span_id=span_id,
        parent_span_id=parent,
        name=name,
        kind=1,
        start_ns=start,
        end_ns=start + 10,
        attributes={},
        status_code=0,
    )


INSTALL = [
    span("reconcile clusterextension", "r", start=0),
    span("clusterextension/unpack", "u", "r", start=5),
    span("clusterextension/resolve", "s", "r", start=1),
    span("GET catalogd metas", "c", "s", start=2),
    span("GET /catalogs/{name}/api/v1/metas", "x", "c", service="catalogd", start=3),
]


def test_the_install_trace_is_the_largest_clusterextension_trace_that_reached_catalogd() -> None:
    later = [
        span("reconcile clusterextension", "r2", trace="t2"),
        *(span(f"s{i}", f"q{i}", "r2", trace="t2") for i in range(9)),
    ]
    catalog = [span("reconcile clustercatalog", "k", trace="t3", service="catalogd")]
    assert tracepic.install_trace([*later, *INSTALL, *catalog]) == "t1"


def test_spans_are_drawn_depth_first_with_siblings_by_start_time() -> None:
    assert [(row.depth, row.span.name) for row in tracepic.tree_order(INSTALL)] == [
        (0, "reconcile clusterextension"),
        (1, "clusterextension/resolve"),
        (2, "GET catalogd metas"),
        (3, "GET /catalogs/{name}/api/v1/metas"),
        (1, "clusterextension/unpack"),
    ]


def test_the_picture_has_a_bar_and_a_label_per_span() -> None:
    svg = tracepic.render(INSTALL, "install")
    assert svg.startswith("<svg")
    assert svg.count('rx="2"') == len(INSTALL)
    assert "GET /catalogs/{name}/api/v1/metas" in svg


def test_a_run_of_identical_childless_siblings_is_one_row_spanning_them() -> None:
    reviews = [span("create subjectaccessreviews", f"a{i}", "p", start=10 + i) for i in range(5)]
    rows = tracepic.tree_order([span("clusterextension/check_permissions", "p", "r"), *reviews, INSTALL[0]])
    (grouped,) = [row for row in rows if row.span.name == "create subjectaccessreviews"]
    assert (grouped.count, grouped.start_ns, grouped.end_ns) == (5, 10, 24)
