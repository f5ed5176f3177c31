"""Both processes' `/metrics` after a real catalog was served and an extension installed: every metric
the monitoring manifests (rules and dashboard) name is served by the process its selector names,
the new metrics count what happened, and the extension's series go when it does."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import pytest
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from e2e.operator_controller.conftest import Extensions, ServedCatalog, wait_installed
from olm_runtime.testing.poll import eventually
from olm_testkit import monitoring
from olm_testkit.names import unique
from olm_testkit.plugin import Installer
from olm_testkit.processes import CatalogdProcess, OperatorControllerProcess


async def _scrape(process: CatalogdProcess | OperatorControllerProcess) -> list[Sample]:
    """Over HTTPS with a metrics reader's token, as Prometheus scrapes with manifests/monitoring."""
    text = await process.scrape()
    return [sample for family in text_string_to_metric_families(text) for sample in family.samples]


def _value(samples: Iterable[Sample], name: str, labels: Mapping[str, str] | None = None) -> float | None:
    """The sample `name` whose labels include `labels`; None when there is none."""
    wanted = (labels or {}).items()
    found = [s.value for s in samples if s.name == name and wanted <= s.labels.items()]
    assert len(found) <= 1, f"{name}{labels} matches {len(found)} samples"
    return found[0] if found else None


Processes = dict[str, CatalogdProcess | OperatorControllerProcess]


@pytest.fixture
def processes(catalogd: CatalogdProcess, operator_controller: OperatorControllerProcess) -> Processes:
    """The session's processes by the job name Prometheus gives them (see manifests/monitoring)."""
    return {"catalogd": catalogd, "operator-controller": operator_controller}


async def test_every_metric_the_monitoring_manifests_name_is_served_and_counts_an_install(
    extensions: Extensions,
    installer: Installer,
    fixture_catalog: ServedCatalog,
    namespace: str,
    processes: Processes,
) -> None:
    account = await installer(namespace)
    name = unique("metrics")
    selector = {"matchLabels": fixture_catalog.label}
    await extensions.create(name, "test", namespace, account, version="1.0.0", selector=selector)
    await wait_installed(extensions, name, "1.0.0")

    controller: list[Sample] = []

    async def install_observed() -> bool:
        nonlocal controller
        controller = await _scrape(processes["operator-controller"])
        return (
            _value(controller, "operator_controller_install_duration_seconds_count", {"change": "created"})
            or 0
        ) >= 1

    # The status write the test saw is followed by the observation, in the same reconcile.
    await eventually(install_observed, what="the install to be timed", timeout=30)
    served = await _scrape(processes["catalogd"])

    by_job = {"operator-controller": {s.name for s in controller}, "catalogd": {s.name for s in served}}
    missing = sorted(
        f"{ref.metric} (job {ref.job or 'any'})"
        for ref in monitoring.referenced()
        if ref.metric not in monitoring.EXTERNAL_METRICS
        and ref.metric
        not in (by_job[ref.job] if ref.job else by_job["catalogd"] | by_job["operator-controller"])
    )
    assert missing == []

    # operator-controller counted what the install did.
    assert (
        _value(controller, "operator_controller_resolution_duration_seconds_count", {"result": "success"})
        or 0
    ) >= 1
    assert (_value(controller, "operator_controller_catalog_fetch_bytes_total") or 0) > 0
    assert (_value(controller, "operator_controller_catalog_cache_misses_total") or 0) >= 1
    for check in ("crd_upgrade_safety", "permissions"):
        labels = {"check": check, "result": "passed"}
        passed = _value(controller, "operator_controller_preflight_checks_total", labels)
        assert (passed or 0) >= 1, check
    installed = {"name": name, "type": "Installed", "status": "True", "reason": "Succeeded"}
    assert _value(controller, "olm_clusterextension_status_condition", installed) == 1
    assert _value(controller, "olm_clusterextension_revisions", {"name": name, "state": "active"}) == 1
    assert _value(controller, "olm_clusterextension_revisions", {"name": name, "state": "archived"}) == 0
    # catalogd counted unpacking and serving the catalog.
    assert (_value(served, "catalogd_unpack_duration_seconds_count", {"result": "success"}) or 0) >= 1
    assert (_value(served, "catalogd_unpack_size_bytes_sum") or 0) > 0
    assert (
        _value(served, "catalogd_http_response_bytes_total", {"endpoint": "metas", "code": "200"}) or 0
    ) > 0
    serving = {"name": fixture_catalog.name, "type": "Serving", "status": "True", "reason": "Available"}
    assert _value(served, "olm_clustercatalog_status_condition", serving) == 1

    await extensions.delete_and_wait_gone(name)

    async def series_gone() -> bool:
        samples = await _scrape(processes["operator-controller"])
        return not [
            s for s in samples if s.name.startswith("olm_clusterextension_") and s.labels.get("name") == name
        ]

    await eventually(series_gone, what=f"the series of {name} to be dropped", timeout=30)
