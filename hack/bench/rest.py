"""Which API requests the OLM sends at rest, on an idle machine and on a loaded one: `make bench-rest`.

`make bench-upstream` once saw ours send 15 requests a minute at rest with 20 extensions installed on
a machine loaded to 8-10, against 2 idle. This bench sets up ours as that bench does (its own
control plane, the controllers as processes running as ServiceAccounts of their own, so the API
server's audit log names every request they send), installs `--extensions` synthetic extensions,
waits `--settle` seconds, and then counts the audit log's requests of the OLM's accounts and the
installer accounts in three windows of `--window` seconds: the machine idle, loaded by `--load`
busy processes, idle again. For each window it prints the requests grouped by account, verb and
resource, both processes' CPU, and how many watches the reflectors reopened because they went
silent (their inactivity watchdog, from the processes' logs).

Run: `uv run --frozen python -m hack.bench.rest [--extensions 20] [--window 120] [--settle 300]
[--load 8] [--shared-drift-watches] [--load-from-start]`.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import tempfile
from datetime import datetime
from pathlib import Path

from hack.bench.cluster import installer_namespace
from hack.bench.install import synthetic
from hack.bench.measure import cpu_seconds
from hack.bench.upstream.sides import Side, side
from hack.flakehunt import contention
from olm.api import names
from olm_testkit import audit
from olm_testkit.catalogs import cluster_catalog, serve_catalog

Key = tuple[str, str, str]
"""(account, verb, resource[/subresource])"""


def grouped(requests: list[tuple[str, audit.Request]]) -> collections.Counter[Key]:
    """Requests by account (the OLM's own by name, the installer accounts together), verb and
    resource (the path of a non-resource request)."""
    return collections.Counter(
        (
            account if account.startswith(f"{names.DEFAULT_SYSTEM_NAMESPACE}:") else "installer accounts",
            request.verb,
            request.resource or request.path,
        )
        for account, request in requests
    )


SILENT = "watch silent for too long"
"""What the reflector logs when its inactivity watchdog reopens a watch that sent nothing."""


def silent_watches(s: Side) -> int:
    """Watches both processes have reopened so far because they went silent."""
    total = 0
    for process in (s.catalogd, s.controller):
        with process.log_file.open(errors="replace") as log:
            total += sum(SILENT in line for line in log)
    return total


async def window(s: Side, label: str, seconds: float) -> None:
    silent_before = silent_watches(s)
    pids = [s.pid(s.catalogd), s.pid(s.controller)]
    cpu_before = [cpu_seconds(pid) for pid in pids]
    offset = s.plane.audit_log.stat().st_size  # what is logged before the window is not read again
    since = datetime.now().astimezone()
    await asyncio.sleep(seconds)  # the measurement window itself, not a synchronisation
    until = datetime.now().astimezone()
    cpu = [cpu_seconds(pid) - before for pid, before in zip(pids, cpu_before, strict=True)]
    requests = await asyncio.to_thread(
        audit.service_account_requests, s.plane.audit_log, since=since, until=until, offset=offset
    )
    counts = grouped(requests)
    total = sum(counts.values())
    print(f"\n{label}: {total * 60 / seconds:.1f} requests/min over {seconds:.0f} s", flush=True)
    print(
        f"  CPU s/min: catalogd {cpu[0] * 60 / seconds:.2f}, operator-controller {cpu[1] * 60 / seconds:.2f}"
    )
    print(f"  watches reopened because they went silent: {silent_watches(s) - silent_before}")
    for (account, verb, resource), n in sorted(counts.items(), key=lambda item: -item[1]):
        print(f"  {n * 60 / seconds:7.1f}/min  {account:40} {verb:8} {resource}")


async def run(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-rest-") as tmp:
        workdir = Path(tmp)
        pods = args.extensions + 10
        everything_loaded = contention(args.load) if args.load_from_start else contextlib.nullcontext()
        with everything_loaded:
            async with side(
                "ours", workdir, None, pods=pods, shared_drift_watches=args.shared_drift_watches
            ) as s:
                await measure(s, workdir, args)


async def measure(s: Side, workdir: Path, args: argparse.Namespace) -> None:
    published = await asyncio.to_thread(synthetic.publish, s.pusher, workdir, args.extensions)
    await serve_catalog(
        s.kube, cluster_catalog("synthetic", published.digest_ref, name_label=True), timeout=900
    )
    _, seconds = await synthetic.install(
        s.kube, args.extensions, "synthetic", installer_namespace, timeout=1800, interval=0.5
    )
    print(f"{args.extensions} extensions Installed in {seconds:.1f} s", flush=True)
    await asyncio.sleep(args.settle)  # the windows start this long after the installs
    if args.load_from_start:
        for i in range(3):
            await window(s, f"loaded from the start, window {i + 1}", args.window)
        return
    await window(s, "idle", args.window)
    with contention(args.load):
        await window(s, f"loaded ({args.load} busy processes)", args.window)
    await window(s, "idle again", args.window)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--extensions", type=int, default=20)
    parser.add_argument("--window", type=float, default=120.0, help="seconds of each window")
    parser.add_argument("--load", type=int, default=8, help="busy processes in the loaded window")
    parser.add_argument("--settle", type=float, default=300.0, help="seconds after the installs")
    parser.add_argument("--shared-drift-watches", action="store_true")
    parser.add_argument(
        "--load-from-start", action="store_true", help="load the machine from before the setup to the end"
    )
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
