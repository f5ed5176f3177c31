"""One leader-election candidate: a manager in its own process, started by test_leader_election.py.

    python -m e2e.runtime.manager.leader_candidate KUBECONFIG NAMESPACE LEASE IDENTITY METRICS_PORT PROBE_PORT

Its only leader runnable writes its identity into the ConfigMap named after the lease, so the test
can see which replica does leader work. SIGTERM stops it cleanly (exit 0); losing the lease exits 3.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from olm_runtime import logging
from olm_runtime.client import Client, load_config
from olm_runtime.manager import LeaderElectionLost, runnable_from

from .election import electing_manager

LOST_EXIT_CODE = 3


async def main(argv: list[str]) -> int:
    kubeconfig, namespace, lease, identity, metrics, probes = argv
    config = await load_config(kubeconfig=Path(kubeconfig))
    async with await Client.connect(config, field_manager=identity) as client:
        manager = electing_manager(
            client,
            lease,
            namespace,
            identity=identity,
            metrics_bind_address=f"127.0.0.1:{metrics}",
            health_probe_bind_address=f"127.0.0.1:{probes}",
        )

        async def announce() -> None:
            await client.apply(
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": lease, "namespace": namespace},
                    "data": {"leader": identity},
                },
                field_manager="leader",
                force=True,
            )
            await asyncio.Event().wait()

        manager.add(runnable_from(announce, name="announce"))
        try:
            await manager.run(handle_signals=True)
        except LeaderElectionLost:
            return LOST_EXIT_CODE
    return 0


if __name__ == "__main__":
    logging.configure(format="console", level="info")
    sys.exit(asyncio.run(main(sys.argv[1:])))
