"""Run the Greeter controller against a cluster: `python -m examples.greeter --kubeconfig PATH`."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import time

from examples.greeter.controller import CRD, GREETING, setup_with_manager
from olm_runtime import logging
from olm_runtime.client import Client, NoKindMatch, errors, load_config
from olm_runtime.manager import LeaderElectionOptions, Manager, ManagerOptions


async def wait_until_served(client: Client, *, timeout: float = 30.0) -> None:
    """A CRD is served a moment after it is created: until discovery lists the kind, the
    controller cannot be set up."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            await client.resource_for(GREETING)
            return
        except NoKindMatch:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.2)


async def run(kubeconfig: str | None, namespace: str, *, metrics: str, probes: str) -> None:
    config = await load_config(kubeconfig=kubeconfig)
    async with await Client.connect(config, field_manager="greeter") as client:
        with contextlib.suppress(errors.AlreadyExists):
            await client.create(CRD)
        await wait_until_served(client)
        options = ManagerOptions(
            leader_election=LeaderElectionOptions(lease_name="greeter", namespace=namespace),
            metrics_bind_address=metrics,
            health_probe_bind_address=probes,
        )
        manager = Manager(client, options=options)
        await setup_with_manager(manager)
        await manager.run(handle_signals=True)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m examples.greeter")
    parser.add_argument("--kubeconfig")
    parser.add_argument("--lease-namespace", default="default")
    # "0" turns a listener off (tests run several controllers on one machine).
    parser.add_argument("--metrics-bind-address", default=":8080")
    parser.add_argument("--health-probe-bind-address", default=":8081")
    args = parser.parse_args()
    logging.configure(format="console")
    asyncio.run(
        run(
            args.kubeconfig,
            args.lease_namespace,
            metrics=args.metrics_bind_address,
            probes=args.health_probe_bind_address,
        )
    )


if __name__ == "__main__":
    main()
