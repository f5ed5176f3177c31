"""Ours against upstream OLM v1.11.0, side by side: one table of medians and ratios.

Run: `make bench-upstream` (`uv run --frozen python -m hack.bench.upstream.run [--repeat 3]
[--many 20,200] [--big-bundles 5000] [--steady 60]`). Upstream is built by `hack.bench.upstream.peer`
when `OLMPY_UPSTREAM_BOXCUTTER` names a boxcutter v0.14.0 checkout; without it the run prints
"peer unavailable" and measures ours alone.

Each side gets its own control plane, registry and cert-manager (`hack.bench.upstream.sides`), and
the same content: the community catalog of the realdata (14.6 MB), a generated catalog of
`--big-bundles` bundles (100 MB at 5,000), a synthetic catalog of one small package per extension,
and the bundle images they name. Every figure that is cheap to repeat is measured `--repeat` times,
alternating the sides so that drift in the machine's load falls on both, and the median is printed.
Times are wall-clock seconds polled every 50 ms from this process, which shares the cores with
both sides; memory is VmRSS/VmHWM from /proc, CPU is utime+stime from /proc, and API requests are
counted in each API server's audit log by the OLM's own ServiceAccounts plus the installer
ServiceAccounts it acts as.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import ssl
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import aiohttp

from hack.bench.catalogd.serve import generate
from hack.bench.cluster import SYSTEM_PODS, installer_namespace, latest_published
from hack.bench.install import synthetic
from hack.bench.measure import cpu_seconds, create_to_serving, metric_sums, proc_memory_mib
from hack.bench.upstream import peer as peers
from hack.bench.upstream.sides import Side, side, watch_per_service_account
from olm.api.kinds import CLUSTER_CATALOG, CLUSTER_EXTENSION
from olm.catalogd.server import ServerOptions
from olm_runtime import conditions
from olm_runtime.client import errors
from olm_runtime.testing.poll import eventually
from olm_testkit import audit
from olm_testkit.catalogs import catalog_selector, cluster_catalog, delete_catalog, push_catalog
from olm_testkit.extensions import Extensions, extension_object
from olm_testkit.images import realdata
from olm_testkit.installer import wait_custom_resources_served

POLL = 0.05
TIMEOUT = 900.0
GZIP_MIN_BYTES = ServerOptions(cert_file=Path(), key_file=Path()).gzip_min_bytes
"""Bodies ours' catalog server never compresses (its default `gzip_min_bytes`)."""
INSTALLS = (("small", "kube-green"), ("large", "sailoperator"))
SIDES = ("upstream", "ours")


# --- rows --------------------------------------------------------------------------------------


@dataclass
class Row:
    what: str
    unit: str
    values: dict[str, list[float]] = field(default_factory=dict)
    lower_is_better: bool = True

    def add(self, name: str, value: float) -> None:
        self.values.setdefault(name, []).append(value)

    def median(self, name: str) -> float | None:
        values = self.values.get(name)
        return statistics.median(values) if values else None


@dataclass
class Table:
    rows: dict[str, Row] = field(default_factory=dict)

    def row(self, what: str, unit: str) -> Row:
        return self.rows.setdefault(what, Row(what, unit))

    def record(self, what: str, unit: str, name: str, value: float) -> None:
        self.row(what, unit).add(name, value)
        print(f"  {name:<8} {what}: {value:.3f} {unit}", flush=True)

    def render(self) -> str:
        lines = [
            "| row | upstream | ours | ours/upstream | n |",
            "|---|---|---|---|---|",
        ]
        for row in self.rows.values():
            up, ours = row.median("upstream"), row.median("ours")
            ratio = f"{ours / up:.2f}" if up and ours is not None else "-"
            n = max((len(v) for v in row.values.values()), default=0)
            lines.append(f"| {row.what} | {_fmt(up, row.unit)} | {_fmt(ours, row.unit)} | {ratio} | {n} |")
        return "\n".join(lines)


def _fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    if unit == "s" and value < 1:
        return f"{value * 1000:.0f} ms"
    if unit in ("s", "MiB", "CPU s/min", "req/min"):
        return f"{value:.1f} {unit}" if value < 100 else f"{value:.0f} {unit}"
    return f"{value:.0f} {unit}"


# --- catalogs ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Catalogs:
    community: str
    big: str
    synthetic: str
    community_published: realdata.PublishedCatalog
    synthetic_packages: int


def publish(s: Side, workdir: Path, big_bundles: int, many: int) -> Catalogs:
    pusher = s.pusher
    packages = sorted(
        p.name for p in (realdata.realdata() / realdata.COMMUNITY_CATALOG).iterdir() if p.is_dir()
    )
    community = realdata.publish_community_catalog(
        pusher, pusher.host, packages=packages, repository_prefix="bench/community"
    )
    big_dir = workdir / f"big-{s.name}"
    generate(big_dir, big_bundles)
    big = push_catalog(pusher, big_dir, f"{s.registry.host}/bench/big:v1")
    synthetic_catalog = synthetic.publish(pusher, workdir, many)
    return Catalogs(
        community=community.digest_ref,
        big=big,
        synthetic=synthetic_catalog.digest_ref,
        community_published=community,
        synthetic_packages=many,
    )


async def serve(s: Side, name: str, ref: str) -> float:
    """Create ClusterCatalog `name` of `ref`; the seconds until it is Serving."""
    catalog = cluster_catalog(name, ref, name_label=True)
    return await create_to_serving(s.kube, catalog, timeout=TIMEOUT, interval=POLL)


async def base_url(s: Side, name: str) -> str:
    found = await s.kube.get(CLUSTER_CATALOG, name)
    return str(found["status"]["urls"]["base"])


# --- HTTP --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Fetch:
    seconds: float
    status: int
    size: int
    validators: dict[str, str]
    cipher: str


async def fetch(
    session: aiohttp.ClientSession, url: str, context: ssl.SSLContext, headers: dict[str, str]
) -> Fetch:
    started = time.perf_counter()
    async with session.get(url, ssl=context, headers=headers) as response:
        # The cipher each server picks for the same client decides much of a plain body's cost.
        transport = response.connection.transport if response.connection else None
        cipher = transport.get_extra_info("cipher") if transport else None
        size = 0
        async for chunk in response.content.iter_chunked(1 << 20):
            size += len(chunk)
        validators = {k: response.headers[k] for k in ("ETag", "Last-Modified") if k in response.headers}
        return Fetch(
            time.perf_counter() - started, response.status, size, validators, str(cipher and cipher[0])
        )


async def gzip_ready(s: Side, catalog_names: tuple[str, ...]) -> None:
    """Wait until each catalog's `all` comes gzip-encoded: ours compresses a stored catalog after it
    is served, and memory and latency are measured once that work is done (upstream compresses
    per request, so it answers gzip at once). Ours never compresses a body under
    `GZIP_MIN_BYTES` (a small `--many`'s synthetic catalog): that one is ready as it is."""
    context = ssl.create_default_context(cafile=str(s.plane.ca_file))
    async with aiohttp.ClientSession(auto_decompress=False) as session:
        for name in catalog_names:
            url = f"{await base_url(s, name)}/api/v1/all"

            async def encoded(url: str = url) -> bool:
                # Headers only: the body (up to 100 MB plain while ours compresses) is left unread
                # and the connection closed.
                async with session.get(url, ssl=context, headers={"Accept-Encoding": "gzip"}) as response:
                    small = response.content_length is not None and response.content_length < GZIP_MIN_BYTES
                    return response.headers.get("Content-Encoding") == "gzip" or small

            await eventually(encoded, what=f"{s.name} {name} to answer gzip", timeout=TIMEOUT, interval=POLL)


async def measure_http(s: Side, table: Table, catalog_name: str, runs: int) -> None:
    context = ssl.create_default_context(cafile=str(s.plane.ca_file))
    base = await base_url(s, catalog_name)
    endpoints = {"all": f"{base}/api/v1/all", "metas package": f"{base}/api/v1/metas?schema=olm.package"}
    async with aiohttp.ClientSession(auto_decompress=False) as session:
        for label, url in endpoints.items():
            for encoding in ("identity", "gzip"):
                samples = [
                    await fetch(session, url, context, {"Accept-Encoding": encoding}) for _ in range(runs)
                ]
                if any(sample.status != 200 for sample in samples):
                    print(f"  {s.name} {label} {encoding}: statuses {[x.status for x in samples]}")
                    continue
                table.record(
                    f"GET {label} ({encoding})", "s", s.name, statistics.median(x.seconds for x in samples)
                )
                table.record(f"GET {label} ({encoding}) bytes", "B", s.name, samples[-1].size)
            if label == "all":
                print(
                    f"  {s.name:<8} TLS cipher negotiated with the benchmark's client: {samples[-1].cipher}"
                )
            first = await fetch(session, url, context, {"Accept-Encoding": "gzip"})
            conditional = {"Accept-Encoding": "gzip"}
            if "ETag" in first.validators:
                conditional["If-None-Match"] = first.validators["ETag"]
            if "Last-Modified" in first.validators:
                conditional["If-Modified-Since"] = first.validators["Last-Modified"]
            again = await fetch(session, url, context, conditional)
            print(
                f"  {s.name:<8} conditional GET {label} with {sorted(first.validators)}: "
                f"{again.status}, {again.size} bytes, {again.seconds * 1000:.1f} ms"
            )
            table.record(f"conditional GET {label}: status", "", s.name, again.status)


# --- extensions --------------------------------------------------------------------------------


async def installed(s: Side, name: str) -> bool:
    try:
        found = dict(await s.kube.get(CLUSTER_EXTENSION, name))
    except errors.NotFound:
        return False
    return conditions.of(found, "Installed").get("status") == "True"


async def install_one(s: Side, package: str, version: str, catalog_name: str, round_: int) -> float:
    name = f"bench-{package}-{round_}"
    account = await installer_namespace(s.kube, name)
    started = time.perf_counter()
    selector = catalog_selector(catalog_name)
    await s.kube.create(extension_object(name, package, name, account, version=version, selector=selector))
    await eventually(
        lambda: installed(s, name), what=f"{s.name} {name} to be Installed", timeout=TIMEOUT, interval=POLL
    )
    seconds = time.perf_counter() - started
    # Every CRD's kind served, not only those carrying our owner label: upstream's may label its own
    # otherwise (`delete_and_wait_gone` waits for the labelled ones).
    await wait_custom_resources_served(s.kube)
    await Extensions(s.kube).delete_and_wait_gone(name, timeout=TIMEOUT)
    return seconds


# --- steady state ------------------------------------------------------------------------------


async def measure_steady(s: Side, table: Table, label: str, seconds: float) -> None:
    pids = [s.pid(s.catalogd), s.pid(s.controller)]
    cpu_before = sum(cpu_seconds(pid) for pid in pids)
    since = datetime.now().astimezone()
    await asyncio.sleep(seconds)  # the measurement window itself, not a synchronisation
    until_ = datetime.now().astimezone()
    cpu = sum(cpu_seconds(pid) for pid in pids) - cpu_before
    # The OLM's own ServiceAccounts and the installer accounts it acts as: nothing else on the plane
    # uses ServiceAccounts.
    requests = len(
        await asyncio.to_thread(audit.service_account_requests, s.plane.audit_log, since=since, until=until_)
    )
    table.record(f"steady state {label}: CPU of both", "CPU s/min", s.name, cpu * 60 / seconds)
    table.record(f"steady state {label}: API requests", "req/min", s.name, requests * 60 / seconds)


# --- restart -----------------------------------------------------------------------------------


async def restart_to_serving(s: Side, catalog_names: Sequence[str]) -> float:
    """SIGKILL catalogd and start it again; seconds until every catalog's content is served."""
    context = ssl.create_default_context(cafile=str(s.plane.ca_file))
    urls = [f"{await base_url(s, name)}/api/v1/metas?schema=olm.package" for name in catalog_names]
    process = s.catalogd.process
    assert process is not None
    started = time.perf_counter()
    process.send_signal(signal.SIGKILL)
    process.wait()
    s.catalogd.process = None
    s.catalogd.start()

    async def all_served() -> bool:
        async with aiohttp.ClientSession() as session:
            for url in urls:
                try:
                    async with session.get(url, ssl=context) as response:
                        if response.status != 200:
                            return False
                        await response.read()
                except aiohttp.ClientError:
                    return False
        return True

    await eventually(all_served, what=f"{s.name} catalogd to serve again", timeout=TIMEOUT, interval=POLL)
    return time.perf_counter() - started


RECONCILERS = {
    "ours": ("clusterextension", "clusterobjectset"),
    # v1.11.0 names its ClusterExtension controller; the ClusterObjectSet one takes the default name.
    "upstream": ("controller-operator-cluster-extension-controller", "clusterobjectset"),
}
"""The controllers, by side, whose reconciles of every extension and revision mean converged."""


def reconciled(metrics: str, controller: str) -> tuple[float, float]:
    """Reconciles so far (any result) and queue depth of one controller, from controller-runtime's
    metric names, which both sides expose."""
    totals = metric_sums(
        metrics, "controller_runtime_reconcile_total", lambda labels: labels.get("controller")
    )
    depths = metric_sums(metrics, "workqueue_depth", lambda labels: labels.get("name"))
    return totals.get(controller, 0.0), depths.get(controller, 0.0)


async def restart_to_reconciled(s: Side, count: int) -> float:
    """SIGTERM operator-controller and start it again; seconds from the start until its
    ClusterExtension and ClusterObjectSet controllers have each reconciled `count` objects and both
    queues are empty (the first reconciles after a restart take the full path: nothing is memoised)."""
    s.controller.stop(timeout=60.0)
    started = time.perf_counter()
    s.controller.start()

    async def converged() -> bool:
        try:
            metrics = await s.controller.scrape()
        except (AssertionError, aiohttp.ClientError):  # not serving yet
            return False
        figures = [reconciled(metrics, name) for name in RECONCILERS[s.name]]
        return all(total >= count and depth == 0 for total, depth in figures)

    await eventually(
        converged,
        what=f"{s.name} operator-controller to reconcile {count} extensions again",
        timeout=TIMEOUT,
        interval=POLL,
    )
    return time.perf_counter() - started


async def record_restart(s: Side, table: Table, count: int, *, seconds_row: str, rss_row: str) -> None:
    """`restart_to_reconciled`, then operator-controller's resident memory once it has settled."""
    table.record(seconds_row, "s", s.name, await restart_to_reconciled(s, count))
    await asyncio.sleep(5.0)  # let the last status writes land before memory is read
    rss, _ = proc_memory_mib(s.pid(s.controller))
    table.record(rss_row, "MiB", s.name, rss)


# --- the run -----------------------------------------------------------------------------------


async def alternate(sides: Sequence[Side], repeat: int, step: Callable[[Side, int], Awaitable[None]]) -> None:
    for round_ in range(repeat):
        ordered = sides if round_ % 2 == 0 else list(reversed(sides))
        for s in ordered:
            await step(s, round_)


async def run(args: argparse.Namespace, peer: peers.Peer | None, workdir: Path) -> Table:
    table = Table()
    many = sorted(int(n) for n in args.many.split(","))
    async with contextlib.AsyncExitStack() as stack:
        sides: list[Side] = []
        for name in SIDES:
            if name == "upstream" and peer is None:
                continue
            s = await stack.enter_async_context(
                side(
                    name,
                    workdir / name,
                    peer if name == "upstream" else None,
                    pods=many[-1] + SYSTEM_PODS,
                    shared_drift_watches=args.ours_watches == "shared",
                )
            )
            sides.append(s)
        published: dict[str, Catalogs] = {}
        for s in sides:
            started = time.perf_counter()
            published[s.name] = await asyncio.to_thread(publish, s, workdir, args.big_bundles, many[-1])
            print(f"{s.name}: published the catalogs and bundles in {time.perf_counter() - started:.0f}s")

        print(f"\ncatalog create -> Serving ({args.repeat} rounds)")

        async def catalogs_round(s: Side, round_: int) -> None:
            for label, ref, what in (
                ("community", published[s.name].community, "community catalog (14.6 MB)"),
                ("big", published[s.name].big, f"generated catalog ({args.big_bundles} bundles)"),
            ):
                table.record(f"{what} create to Serving", "s", s.name, await serve(s, label, ref))
                if round_ < args.repeat - 1:
                    await delete_catalog(s.kube, label, timeout=TIMEOUT)

        await alternate(sides, args.repeat, catalogs_round)
        for s in sides:
            await serve(s, "synthetic", published[s.name].synthetic)
            await gzip_ready(s, ("community", "big", "synthetic"))
            rss, hwm = proc_memory_mib(s.pid(s.catalogd))
            table.record("catalogd RSS serving all catalogs", "MiB", s.name, rss)
            table.record("catalogd peak RSS", "MiB", s.name, hwm)

        print("\ncatalog content over HTTPS (community catalog)")
        for s in sides:
            await measure_http(s, table, "community", args.http_runs)

        for s in sides:
            rss, _ = proc_memory_mib(s.pid(s.controller))
            table.record("operator-controller RSS idle, 3 catalogs served", "MiB", s.name, rss)
            await measure_steady(s, table, "idle", args.steady)

        print(f"\ncreate -> Installed ({args.repeat} rounds)")

        async def installs_round(s: Side, round_: int) -> None:
            for size, package in INSTALLS:
                version = latest_published(published[s.name].community_published, package)
                seconds = await install_one(s, package, version, "community", round_)
                table.record(f"{size} bundle ({package} {version}) create to Installed", "s", s.name, seconds)

        await alternate(sides, args.repeat, installs_round)

        for s in sides:
            first = 0
            for count in many:
                _, seconds = await synthetic.install(
                    s.kube, count, "synthetic", first=first, timeout=TIMEOUT * 2, interval=POLL
                )
                what = f"{count} extensions to all Installed" + (f" ({count - first} added)" if first else "")
                table.record(what, "s", s.name, seconds)
                await asyncio.sleep(5.0)  # let the last status writes land before memory is read
                rss, hwm = proc_memory_mib(s.pid(s.controller))
                table.record(f"operator-controller RSS with {count} installed", "MiB", s.name, rss)
                table.record(f"operator-controller peak RSS with {count} installed", "MiB", s.name, hwm)
                await measure_steady(s, table, f"{count} installed", args.steady)
                first = count
            await record_restart(
                s,
                table,
                many[-1],
                seconds_row=f"operator-controller restart to {many[-1]} extensions reconciled",
                rss_row=f"operator-controller RSS after restart, {many[-1]} reconciled",
            )
            if s.name == "ours" and args.ours_watches == "shared":
                # The default, for the record: each extension's objects watched as its ServiceAccount.
                watch_per_service_account(s)
                await record_restart(
                    s,
                    table,
                    many[-1],
                    seconds_row=f"ours, drift watches per ServiceAccount: restart to {many[-1]} reconciled",
                    rss_row="ours, drift watches per ServiceAccount: RSS after that restart",
                )

        print(f"\ncatalogd SIGKILL -> all catalogs served again ({args.repeat} rounds)")

        async def restart_round(s: Side, round_: int) -> None:
            seconds = await restart_to_serving(s, ("community", "big", "synthetic"))
            table.record("catalogd SIGKILL to all catalogs served", "s", s.name, seconds)

        await alternate(sides, args.repeat, restart_round)
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="rounds of each repeatable figure")
    parser.add_argument("--many", default="20,200", help="extension counts, installed cumulatively")
    parser.add_argument("--big-bundles", type=int, default=5000, help="bundles of the generated catalog")
    parser.add_argument("--steady", type=float, default=60.0, help="seconds of each steady-state window")
    parser.add_argument("--http-runs", type=int, default=7, help="requests per HTTP figure")
    parser.add_argument(
        "--ours-watches",
        choices=("shared", "per-service-account"),
        default="shared",
        help="ours' drift watches: shared (as operator-controller, as upstream's are) or per ServiceAccount "
        "(its default); with shared, ours is also restarted per ServiceAccount at the end, for the record",
    )
    args = parser.parse_args()
    try:
        peer: peers.Peer | None = peers.build()
        print(f"peer: upstream {peers.UPSTREAM_VERSION} from {peer.binaries if peer else '-'}")
    except peers.PeerUnavailable as reason:
        peer = None
        print(f"peer unavailable: {reason}\nmeasuring ours alone")
    workdir = Path(tempfile.mkdtemp(prefix="bench-upstream-"))
    table = asyncio.run(run(args, peer, workdir))
    print("\n" + table.render())
    print(
        f"\nmedians; machine: {os.cpu_count()} cores; each side on its own control plane; "
        f"leader election off on both; upstream {peers.UPSTREAM_VERSION} with its experimental "
        f"feature gates (ClusterObjectSet applier); ours' drift watches: {args.ours_watches}"
    )


if __name__ == "__main__":
    main()
