"""catalogd ingest with and without a signature policy: what verifying a cosign signature costs.

Run: `uv run --frozen python -m hack.bench.catalogd.signatures [--bundles 5000] [--rounds 3]`.
Not part of `make test` or `make bench`'s default set.

The generated catalog of `hack.bench.catalogd.serve` (`--bundles 5000`: about 100 MB of FBC, the size
class of the certified operators catalog) is pushed once and signed with cosign (a key pair made
here, no transparency log). Each round starts two fresh catalogd processes, one after the other,
each with storage of its own (a cold blob cache, so both download everything):

- `no policy`: `--signature-policy` names a file that does not exist (nothing is verified);
- `sigstoreSigned`: a policy requiring a signature by the key for the image's scope.

Each ingests the catalog by tag (which of the two goes first alternates between rounds); the
figure is seconds from creating the ClusterCatalog to `Serving=True`. Printed: every run, the
medians and their ratio, and, from catalogd's `signature_policy.*` log lines, how many images it
checked and refused. A last run times how long
an unsigned copy of the image takes to be refused (`Progressing=Retrying` naming the policy).
Ingest times on a shared machine vary by more than verification costs, so the verification itself
is also timed in this process: `SignaturePolicy.verify` of the signed image, first with a cold blob
cache, then `--verifications` times warm (what each later pull pays).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import structlog

from hack.bench.catalogd.serve import SERVE_TIMEOUT, generate
from hack.bench.cluster import plane_and_registry, pusher
from hack.bench.measure import create_to_serving
from olm import oci
from olm.api.kinds import CLUSTER_CATALOG
from olm_runtime import conditions
from olm_runtime.client import Client, load_config
from olm_runtime.testing.controlplane import ControlPlane
from olm_runtime.testing.poll import eventually
from olm_runtime.testing.registry import Registry
from olm_testkit import binaries, crds
from olm_testkit.catalogs import cluster_catalog, delete_catalog, push_catalog
from olm_testkit.cosign import Cosign
from olm_testkit.processes import CatalogdProcess

FIELD_MANAGER = "bench"
POLL = 0.05


def counts(log: Path) -> tuple[int, int]:
    """`(accepted, refused)` images in a catalogd log of JSON lines."""
    accepted = refused = 0
    for line in log.read_text().splitlines():
        if '"signature_policy.' not in line:
            continue
        event = json.loads(line).get("event")
        accepted += event == "signature_policy.accepted"
        refused += event == "signature_policy.refused"
    return accepted, refused


def _catalogd(plane: ControlPlane, workdir: Path, policy: Path) -> CatalogdProcess:
    """A catalogd of every catalog, logging JSON (`counts` reads its decisions), reading `policy`."""
    return CatalogdProcess(
        plane,
        workdir,
        webhook=False,
        scope_selector=None,
        extra_args=("--log-format=json", "--log-level=info", f"--signature-policy={policy}"),
    )


async def ingest(
    plane: ControlPlane, kube: Client, workdir: Path, *, policy: Path, ref: str, name: str
) -> tuple[float, tuple[int, int]]:
    """Seconds to Serving of `ref` for a fresh catalogd reading `policy`; its (accepted, refused)."""
    catalogd = _catalogd(plane, workdir, policy)
    async with catalogd.running():
        seconds = await create_to_serving(
            kube, cluster_catalog(name, ref), timeout=SERVE_TIMEOUT, interval=POLL
        )
        await delete_catalog(kube, name)
    return seconds, counts(catalogd.log_file)


async def refusal(
    plane: ControlPlane, kube: Client, workdir: Path, policy: Path, ref: str
) -> tuple[float, tuple[int, int]]:
    """Seconds until an unsigned `ref` is refused by a fresh catalogd reading `policy`."""
    catalogd = _catalogd(plane, workdir, policy)
    async with catalogd.running():
        started = time.perf_counter()
        await kube.create(cluster_catalog("bench-unsigned", ref))

        async def refused() -> bool:
            found = await kube.get(CLUSTER_CATALOG, "bench-unsigned")
            return "rejected by the signature policy" in str(
                conditions.of(found, "Progressing").get("message")
            )

        await eventually(refused, what="the unsigned catalog refused", timeout=SERVE_TIMEOUT, interval=POLL)
        seconds = time.perf_counter() - started
        await delete_catalog(kube, "bench-unsigned")
    return seconds, counts(catalogd.log_file)


async def run(args: argparse.Namespace) -> None:
    work = Path(tempfile.mkdtemp(prefix="bench-signatures-"))
    try:
        cosign_binary = binaries.ensure_binaries() / "cosign"
        with plane_and_registry(work) as (plane, registry):
            config = await load_config(kubeconfig=plane.kubeconfig)
            async with await Client.connect(config, field_manager=FIELD_MANAGER) as kube:
                await crds.install(kube, field_manager=FIELD_MANAGER)
                await measure(plane, registry, kube=kube, cosign_binary=cosign_binary, work=work, args=args)
    finally:
        shutil.rmtree(work, ignore_errors=True)


async def measure(
    plane: ControlPlane,
    registry: Registry,
    *,
    kube: Client,
    cosign_binary: Path,
    work: Path,
    args: argparse.Namespace,
) -> None:
    directory = work / "generated"
    await asyncio.to_thread(generate, directory, args.bundles)
    size = sum(p.stat().st_size for p in directory.rglob("*") if p.is_file())
    client = pusher(registry)
    tag_ref = f"{registry.host}/bench/signed/catalog:v1"
    digest_ref = await asyncio.to_thread(push_catalog, client, directory, tag_ref)
    unsigned = await asyncio.to_thread(
        push_catalog, client, directory, f"{registry.host}/bench/signed/unsigned:v1"
    )
    cosign = Cosign(cosign_binary, work / "cosign", registry.ca_file)
    key = await asyncio.to_thread(cosign.key_pair, "bench")
    started = time.perf_counter()
    await asyncio.to_thread(cosign.sign, key, digest_ref)
    print(
        f"catalog: {args.bundles} bundles, {size / 1e6:.1f} MB of FBC; "
        f"cosign sign: {time.perf_counter() - started:.2f} s"
    )

    absent = work / "no-policy.json"
    policy = work / "policy.json"
    requirement = {
        "type": "sigstoreSigned",
        "keyPath": str(key.public),
        "signedIdentity": {"type": "matchRepository"},
    }
    document = {
        "default": [{"type": "reject"}],
        "transports": {"docker": {f"{registry.host}/bench/signed": [requirement]}},
    }
    policy.write_text(json.dumps(document))

    runs: dict[str, list[float]] = {"no policy": [], "sigstoreSigned": []}
    totals = {"no policy": [0, 0], "sigstoreSigned": [0, 0]}
    for round_ in range(args.rounds):
        pair = (("no policy", absent), ("sigstoreSigned", policy))
        for label, path in pair if round_ % 2 == 0 else pair[::-1]:  # neither always goes first
            workdir = work / f"catalogd-{round_}-{label.replace(' ', '-')}"
            name = f"bench-{round_}-{'signed' if path == policy else 'plain'}"
            seconds, (accepted, refused) = await ingest(
                plane, kube, workdir, policy=path, ref=tag_ref, name=name
            )
            runs[label].append(seconds)
            totals[label][0] += accepted
            totals[label][1] += refused
            print(
                f"round {round_ + 1} {label:>15}: {seconds:6.2f} s to Serving "
                f"(checked {accepted + refused}, refused {refused})",
                flush=True,
            )

    without, with_ = statistics.median(runs["no policy"]), statistics.median(runs["sigstoreSigned"])
    print(
        f"median to Serving: no policy {without:.2f} s, sigstoreSigned {with_:.2f} s, "
        f"ratio {with_ / without:.3f}"
    )
    seconds, (accepted, refused) = await refusal(plane, kube, work / "catalogd-refusal", policy, unsigned)
    print(f"unsigned copy refused after {seconds:.2f} s (checked {accepted + refused}, refused {refused})")
    await verify_in_process(registry, policy, tag_ref, work / "verify-cache", args.verifications)
    checked = sum(a + r for a, r in totals.values()) + accepted + refused
    print(
        f"images checked against a policy: {checked}; refused: {sum(r for _, r in totals.values()) + refused}"
    )


async def verify_in_process(registry: Registry, policy: Path, ref: str, cache: Path, times: int) -> None:
    """Time `SignaturePolicy.verify` of `ref` alone: cold (nothing cached), then warm."""
    verifier = oci.SignaturePolicy(policy)
    options = oci.ClientOptions(cache_dir=cache, ca_files=(registry.ca_file,))
    reference = oci.Reference.parse(ref)
    async with oci.RegistryClient(options) as client:
        digest = await client.resolve(reference)
        started = time.perf_counter()
        await verifier.verify(client, reference, digest)
        cold = time.perf_counter() - started
        warm = []
        for _ in range(times):
            started = time.perf_counter()
            await verifier.verify(client, reference, digest)
            warm.append(time.perf_counter() - started)
    print(
        f"SignaturePolicy.verify in process: cold {cold * 1000:.1f} ms, warm median "
        f"{statistics.median(warm) * 1000:.1f} ms over {times} ({verifier.statistics()})"
    )


def main() -> None:
    # The in-process verifications log each decision at info; only the figures are wanted here.
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--bundles", type=int, default=5000, help="bundles of the generated catalog (~20 KiB each)"
    )
    parser.add_argument(
        "--rounds", type=int, default=3, help="ingests with and without the policy, alternating"
    )
    parser.add_argument("--verifications", type=int, default=50, help="warm in-process verifications to time")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
