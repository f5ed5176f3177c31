"""The Manager: one per process; it starts and stops everything else in a fixed order.

    async with await Client.connect(field_manager="widgets") as client:
        mgr = manager.Manager(client, options=manager.ManagerOptions(
            leader_election=manager.LeaderElectionOptions(lease_name="widgets-controller"),
            health_probe_bind_address=":8081",
        ))
        mgr.add(controller)              # any Runnable: async def start(self) -> None
        await mgr.run(handle_signals=True)

The model. Everything the manager runs is a `Runnable`: `start()` runs until its task is cancelled.
Runnables fall into groups that start in this order, each waiting for the previous one:

1. the HTTP servers: `/metrics` (`metrics_bind_address`, `:8080`; plain HTTP, or HTTPS for callers
   the API server authorizes with `metrics_secure`) and `/healthz` + `/readyz`
   (`health_probe_bind_address`, off by default); started once listening;
2. the webhook server (only if a handler was registered), started once listening;
3. the caches, started once synced (bounded by `cache_sync_timeout`); they run on every replica, so a
   standby keeps warm informers and a new leader reconciles at once;
4. runnables with `needs_leader_election = False` (and the Event writer);
5. leader runnables (the default): at once without leader election, otherwise once this replica
   holds the Lease, when `elected` is set.

Stopping (cancel `run()`, SIGTERM/SIGINT with `handle_signals=True`, or a failure) goes in the
reverse order within `graceful_shutdown_timeout` (30 s): leader runnables are cancelled and awaited
(controllers finish the reconciles in flight), then the Lease is released so a standby takes over at
once, then the other groups. One `asyncio.TaskGroup` owns every task.

What is promised:

- a group starts only after the groups before it are ready; a leader runnable never starts before the
  caches synced and the Lease is held;
- a runnable that raises stops the manager, and `run()` raises that exception once everything stopped;
- losing the Lease (no renewal within `renew_deadline`, or another holder seen) cancels the leader
  runnables at once, stops the rest without waiting for the grace period, and makes `run()` raise
  `LeaderElectionLost`: the process is expected to exit, as with controller-runtime;
- the Lease is released only after the leader runnables have stopped, and not at all if they did
  not stop in time;
- `/readyz` fails until the caches synced (and while an informer's watch stays broken), and while
  leading with a renewal overdue; `/healthz` fails in the latter case too.

Not promised: a single leader at every instant (see `leaderelection`), or that a runnable that
ignores cancellation is ever stopped (the grace period cancels it a second time, then `run()` waits).

Modules: `options` (ManagerOptions, LeaderElectionOptions, SecureMetricsOptions), `runnable`,
`health` (checks), `leaderelection` (the Lease protocol, usable alone), `webhook` (admission server
and helpers), `certwatcher` (the serving certificate every TLS server shares: `ServingCertificate`,
the fields `WebhookOptions` and `SecureMetricsOptions` have in common, and `CertWatcher`, which
reloads it; usable by a process's own TLS servers), `tlsprofile` (the TLS versions, suites and
curve every TLS server accepts, by upstream's profile names), `certificates` (the self-signed certificate and
the one builder of certificates, which the test kit's CA uses too).
Events live in `olm_runtime.events`.
"""

from olm_runtime.manager import health, leaderelection, tlsprofile, webhook
from olm_runtime.manager._manager import CacheSyncTimeout, GracefulShutdownTimeout, Manager
from olm_runtime.manager.leaderelection import LeaderElectionLost
from olm_runtime.manager.options import LeaderElectionOptions, ManagerOptions, SecureMetricsOptions
from olm_runtime.manager.runnable import Runnable, runnable_from
from olm_runtime.manager.webhook import WebhookOptions

__all__ = [
    "CacheSyncTimeout",
    "GracefulShutdownTimeout",
    "LeaderElectionLost",
    "LeaderElectionOptions",
    "Manager",
    "ManagerOptions",
    "Runnable",
    "SecureMetricsOptions",
    "WebhookOptions",
    "health",
    "leaderelection",
    "runnable_from",
    "tlsprofile",
    "webhook",
]
