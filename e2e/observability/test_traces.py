"""One install is one trace across both processes, exported to a real OpenTelemetry Collector.

A real catalogd and operator-controller, configured only through the standard `OTEL_*` variables,
export to the collector built by `hack/controlplane`; the test installs the fixture catalog's
`test` package and reads the spans back from the collector's file exporter: the ClusterExtension
reconcile, its steps, the API server, registry and catalogd calls, and catalogd's server span as
the child of operator-controller's client span. The JSON logs of both processes carry the same
trace and span IDs.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import pytest

from e2e.observability.conftest import Traced
from e2e.operator_controller.conftest import serve_catalog
from olm_runtime.client import Client
from olm_runtime.testing.poll import eventually
from olm_testkit.catalogs import delete_catalog
from olm_testkit.collector import Span
from olm_testkit.extensions import Extensions
from olm_testkit.images import realdata
from olm_testkit.images.registry import RegistryClient
from olm_testkit.names import unique
from olm_testkit.plugin import Installer
from olm_testkit.processes import CatalogdProcess, OperatorControllerProcess

CLIENT, SERVER = 3, 2
ERROR = 2

INSTALL_STEPS = (
    "check_name",
    "read_revisions",
    "check_service_account",
    "roll_back_failed",
    "resolve",
    "hold_rolled_back",
    "reuse_revision",
    "unpack",
    "render",
    "check_permission_growth",
    "check_readiness",
    "pack",
    "preflight",
    "check_permissions",
    "apply",
)


def children(spans: Iterable[Span], parent: Span) -> list[Span]:
    return sorted((s for s in spans if s.parent_span_id == parent.span_id), key=lambda s: s.start_ns)


def descendants(spans: list[Span], root: Span) -> list[Span]:
    found, frontier = [], [root]
    while frontier:
        current = frontier.pop()
        below = children(spans, current)
        found += below
        frontier += below
    return found


def json_log(process: CatalogdProcess | OperatorControllerProcess) -> list[dict[str, Any]]:
    lines = process.log_file.read_text(errors="replace").splitlines()
    return [json.loads(line) for line in lines if line.startswith("{")]


@pytest.fixture(scope="module")
def extensions(kube: Client, traced: Traced) -> Extensions:
    return Extensions(kube)


async def test_one_install_is_one_trace_across_both_processes(
    pusher: RegistryClient, traced: Traced, extensions: Extensions, installer: Installer, namespace: str
) -> None:
    kube, collector = extensions.kube, traced.collector
    published = realdata.publish_fixture_catalog(
        pusher, pusher.host, version="v1", repository_prefix=unique("e2e-traces")
    )
    catalog = await serve_catalog(kube, published, kind="fixture")
    account = await installer(namespace)
    name = unique("traced")
    try:
        await extensions.create(
            name, "test", namespace, account, version="1.0.0", selector={"matchLabels": catalog.label}
        )
        await extensions.wait_condition(name, "Installed", "True", reason="Succeeded", timeout=180)

        # The install: the reconcile of this extension whose trace reached catalogd (later
        # reconciles answer from the catalog client's cache) and applied a revision.
        def install_trace() -> tuple[Span, list[Span]] | None:
            spans = collector.spans()
            for reconcile in spans:
                if (
                    reconcile.name != "reconcile clusterextension"
                    or reconcile.attributes["object.name"] != name
                ):
                    continue
                trace = [s for s in spans if s.trace_id == reconcile.trace_id]
                names = {s.name for s in trace}
                if "clusterextension/apply" in names and any(s.service == "catalogd" for s in trace):
                    return reconcile, trace
            return None

        async def exported() -> bool:
            return install_trace() is not None

        await eventually(exported, what="the install's trace to be exported")
        found = install_trace()
        assert found is not None
        reconcile, trace = found
    finally:
        await extensions.delete_and_wait_gone(name)
        await delete_catalog(kube, catalog.name)

    # The reconcile span is the trace's root and names the object.
    assert reconcile.parent_span_id == ""
    assert reconcile.service == "operator-controller"
    assert reconcile.attributes["controller"] == "clusterextension"
    assert reconcile.attributes["object.kind"] == "ClusterExtension"
    assert "object.namespace" not in reconcile.attributes  # cluster-scoped
    reconcile_id = reconcile.attributes["reconcile.id"]
    assert len(reconcile_id) == 16

    # Its children are the steps, in order, then the status write; the rest are the reconcile's
    # own API calls (the finalizer patch).
    below = children(trace, reconcile)
    steps = [s.name for s in below if s.kind != CLIENT]
    assert steps == [*(f"clusterextension/{step}" for step in INSTALL_STEPS), "clusterextension/status"]
    assert all("k8s.verb" in s.attributes for s in below if s.kind == CLIENT)
    by_name = {s.name: s for s in trace}
    resolve = by_name["clusterextension/resolve"]
    gather = by_name["clusterextension/gather_catalogs"]
    assert gather.parent_span_id == resolve.span_id

    # operator-controller's catalogd requests are client spans under gather_catalogs; each has
    # catalogd's server span as its child, in catalogd's service.
    catalog_calls = [
        s for s in descendants(trace, gather) if s.kind == CLIENT and s.name.startswith("GET catalogd")
    ]
    assert catalog_calls, "no catalogd client span under gather_catalogs"
    for call in catalog_calls:
        assert call.attributes["olm.catalog"] == catalog.name
        assert call.attributes["http.response.status_code"] == 200
        (served,) = children(trace, call)
        assert served.service == "catalogd"
        assert served.kind == SERVER
        assert served.name == "GET /catalogs/{name}/api/v1/metas"
        assert served.attributes["olm.catalog"] == catalog.name
        assert served.attributes["http.response.status_code"] == 200
        assert call.start_ns <= served.start_ns

    # The bundle pull: registry client spans under unpack.
    pulls = [s for s in descendants(trace, by_name["clusterextension/unpack"]) if s.kind == CLIENT]
    assert pulls, "no registry span under unpack"
    assert all(s.name.startswith(("GET /v2/{name}/", "HEAD /v2/{name}/")) for s in pulls)
    assert {s.attributes["server.address"] for s in pulls} == {pusher.host}

    # API server calls: client spans with the verb, resource and status code; the revision is
    # created under apply.
    api_calls = [s for s in trace if s.kind == CLIENT and "k8s.resource" in s.attributes]
    assert api_calls
    for call in api_calls:
        assert call.name == f"{call.attributes['k8s.verb']} {call.attributes['k8s.resource']}"
        assert isinstance(call.attributes["http.response.status_code"], int)
    applied = [
        s
        for s in descendants(trace, by_name["clusterextension/apply"])
        if s.name == "create clusterobjectsets"
    ]
    assert [s.attributes["http.response.status_code"] for s in applied] == [201]
    assert all(s.status_code != ERROR for s in trace if s.kind != CLIENT)

    # The revision's rollout: its own trace, with a span per phase.
    spans = collector.spans()
    rollouts = [
        s
        for s in spans
        if s.name == "reconcile clusterobjectset" and s.attributes["object.name"] == f"{name}-1"
    ]
    phases = {
        p.name
        for r in rollouts
        for p in descendants(spans, r)
        if p.name.startswith("clusterobjectset/phase ")
    }
    assert "clusterobjectset/phase deploy" in phases

    # The catalog's unpack in catalogd: resolve, unpack (pull, store), serve.
    catalog_reconciles = [
        s
        for s in spans
        if s.name == "reconcile clustercatalog" and s.attributes["object.name"] == catalog.name
    ]
    catalog_steps = {d.name for r in catalog_reconciles for d in descendants(spans, r)}
    assert {
        "clustercatalog/resolve",
        "clustercatalog/unpack",
        "clustercatalog/pull",
        "clustercatalog/store",
    } <= (catalog_steps)

    # Logs: every line written inside a reconcile, in either process, carries the object's
    # identity and the trace and span IDs of that reconcile's trace; catalogd's request lines
    # for the install carry the install's trace.
    reconcile_lines = [
        line
        for process in (traced.operator_controller, traced.catalogd)
        for line in json_log(process)
        if "reconcile_id" in line
    ]
    assert {line["kind"] for line in reconcile_lines} >= {"ClusterObjectSet", "ClusterCatalog"}

    async def every_line_has_its_trace() -> bool:
        traces = {
            s.attributes["reconcile.id"]: s.trace_id
            for s in collector.spans()
            if s.name.startswith("reconcile ")
        }
        return all(traces.get(line["reconcile_id"]) == line["trace_id"] for line in reconcile_lines)

    await eventually(every_line_has_its_trace, what="the reconcile spans of every log line to be exported")
    for line in reconcile_lines:
        assert {"controller", "kind", "object", "span_id"} <= line.keys()
    served_ids = {s.span_id for s in trace if s.service == "catalogd"}
    requests = [line for line in json_log(traced.catalogd) if line.get("span_id") in served_ids]
    assert {line["event"] for line in requests} == {"http.request"}
    assert len(requests) == len(served_ids)
    assert all(line["trace_id"] == reconcile.trace_id for line in requests)

    print(
        f"\nspans in the install trace: {len(trace)} "
        f"(operator-controller {sum(s.service == 'operator-controller' for s in trace)}, "
        f"catalogd {sum(s.service == 'catalogd' for s in trace)}); "
        f"all spans exported: {len(spans)}; traces file: {collector.traces_file}"
    )
