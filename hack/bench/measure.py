"""What the benchmarks measure with, shared by all of them: memory and CPU from /proc, sums over a
`/metrics` page, a wait until operator-controller is quiet, a timer for catalog create -> Serving,
and the report that prints figures as they come and a summary table at the end.

Module-level imports stay light (the standard library, aiohttp and prometheus_client's parser):
the runtime contenders import `own_rss`, and their resident memory is one of the figures.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import aiohttp
from prometheus_client.parser import text_string_to_metric_families

if TYPE_CHECKING:
    from olm_runtime.client import Client
    from olm_testkit.processes import CatalogdProcess, OperatorControllerProcess

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")
PLAIN_METRICS = "--no-metrics-secure"
"""The flag a bench starts a process with to read its `/metrics` over plain HTTP: operator-
controller counts its own API requests, and a secure listener's TokenReviews and
SubjectAccessReviews (made as scrapes arrive) would count among them."""


# --- /proc -------------------------------------------------------------------------------------


def own_rss() -> int:
    """Resident memory of this process in bytes."""
    with open("/proc/self/statm", encoding="ascii") as f:
        return int(f.read().split()[1]) * PAGE


def proc_memory_mib(pid: int) -> tuple[float, float]:
    """(VmRSS, VmHWM) of `pid` in MiB."""
    values: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            values[key] = int(rest.split()[0]) / 1024
    return values["VmRSS"], values["VmHWM"]


def tcp_connections(pid: int, port: int) -> int:
    """Established TCP connections of `pid` to remote `port` (from `/proc/<pid>/net/tcp{,6}`, matched
    to the process's own socket inodes)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:[") : -1])
    count = 0
    for table in ("tcp", "tcp6"):
        for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            remote_port = int(fields[2].rsplit(":", 1)[1], 16)
            established = fields[3] == "01"
            if established and remote_port == port and fields[9] in inodes:
                count += 1
    return count


def cpu_seconds(pid: int) -> float:
    """User plus system CPU seconds of `pid` so far (`utime` and `stime` of `/proc/<pid>/stat`)."""
    text = Path(f"/proc/{pid}/stat").read_text()
    # The command name (field 2) may hold spaces; the fields after its closing parenthesis do not.
    fields = text[text.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


# --- /metrics ----------------------------------------------------------------------------------


def metric_sums(text: str, name: str, key: Callable[[Mapping[str, str]], str | None]) -> dict[str, float]:
    """The samples called `name` on the `/metrics` page `text`, summed per `key(labels)` (samples
    whose key is None are left out)."""
    sums: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and (k := key(sample.labels)) is not None:
                sums[k] = sums.get(k, 0.0) + sample.value
    return sums


async def metrics_page(process: CatalogdProcess | OperatorControllerProcess) -> str:
    """The process's `/metrics`: over plain HTTP when it was started with `PLAIN_METRICS`, else as
    `Subprocess.scrape` reads it (HTTPS, with a metrics reader's token)."""
    if PLAIN_METRICS not in process.extra_args:
        return await process.scrape()
    url = f"http://127.0.0.1:{process.ports['metrics']}/metrics"
    async with aiohttp.ClientSession() as session, session.get(url) as response:
        response.raise_for_status()
        return await response.text()


@dataclass(frozen=True)
class Scrape:
    """What one `/metrics` read of operator-controller says."""

    requests: dict[str, float]
    """`rest_client_requests_total` summed per `method`."""
    reconciles: dict[str, float]
    """`controller_runtime_reconcile_total` summed per `controller`."""

    def minus(self, other: Scrape) -> Scrape:
        return Scrape(
            {k: v - other.requests.get(k, 0.0) for k, v in self.requests.items()},
            {k: v - other.reconciles.get(k, 0.0) for k, v in self.reconciles.items()},
        )


async def scrape(process: OperatorControllerProcess) -> Scrape:
    text = await metrics_page(process)
    return Scrape(
        metric_sums(text, "rest_client_requests_total", lambda labels: labels.get("method", "?")),
        metric_sums(text, "controller_runtime_reconcile_total", lambda labels: labels.get("controller", "?")),
    )


async def quiet(process: OperatorControllerProcess, *, still: float = 3.0, timeout: float = 120.0) -> Scrape:
    """Wait until no controller reconciled for `still` seconds; the scrape at that moment."""
    deadline = time.monotonic() + timeout
    last = await scrape(process)
    since = time.monotonic()
    while time.monotonic() < deadline:
        await asyncio.sleep(0.5)
        now = await scrape(process)
        if now.reconciles != last.reconciles:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= still:
            return now
    raise TimeoutError("operator-controller kept reconciling")


# --- timers ------------------------------------------------------------------------------------


async def create_to_serving(
    kube: Client, catalog: Mapping[str, Any], *, timeout: float, interval: float
) -> float:
    """Create the ClusterCatalog `catalog`; the seconds until it is Serving, polled every `interval`
    (finer than `olm_testkit.catalogs.serve_catalog` polls: the time is the figure)."""
    # Here, not at the top: see the module's docstring.
    from olm.api.kinds import CLUSTER_CATALOG  # noqa: PLC0415
    from olm_runtime.testing.poll import eventually  # noqa: PLC0415
    from olm_testkit.catalogs import serving  # noqa: PLC0415

    name = catalog["metadata"]["name"]
    started = time.perf_counter()
    await kube.create(catalog)

    async def served() -> bool:
        return serving(dict(await kube.get(CLUSTER_CATALOG, name)))

    await eventually(served, what=f"ClusterCatalog {name} to serve", timeout=timeout, interval=interval)
    return time.perf_counter() - started


# --- the report --------------------------------------------------------------------------------


@dataclass
class Report:
    """Figures printed as they come, and again as one table at the end."""

    lines: list[str] = field(default_factory=list)
    table: list[tuple[str, str]] = field(default_factory=list)

    def say(self, text: str) -> None:
        print(text, flush=True)
        self.lines.append(text)

    def figure(self, what: str, value: str) -> None:
        self.say(f"  {what}: {value}")
        self.table.append((what, value))

    def print_summary(self) -> None:
        width = max(len(what) for what, _ in self.table)
        print("\n" + "=" * 30 + " summary " + "=" * 30)
        for what, value in self.table:
            print(f"{what:<{width}}  {value}")
