"""Run the Greeter controller against a cluster: `python -m hack.examples.greeter --kubeconfig PATH`."""

from __future__ import annotations

import argparse
import asyncio
import contextlib

from hack.examples.greeter.controller import CRD, setup_with_manager
from olm_runtime import logging
from olm_runtime.client import Client, errors, load_config
from olm_runtime.manager import LeaderElectionOptions, Manager, ManagerOptions


async def run(kubeconfig: str | None, namespace: str) -> None:
    config = await load_config(kubeconfig=kubeconfig)
    async with await Client.connect(config, field_manager="greeter") as client:
        with contextlib.suppress(errors.AlreadyExists):
            await client.create(CRD)
        options = ManagerOptions(
            leader_election=LeaderElectionOptions(lease_name="greeter", namespace=namespace),
            health_probe_bind_address=":8081",
        )
        manager = Manager(client, options=options)
        await setup_with_manager(manager)
        await manager.run(handle_signals=True)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m hack.examples.greeter")
    parser.add_argument("--kubeconfig")
    parser.add_argument("--lease-namespace", default="default")
    args = parser.parse_args()
    logging.configure(format="console")
    asyncio.run(run(args.kubeconfig, args.lease_namespace))


if __name__ == "__main__":
    main()
