"""olm_runtime: a controller-runtime-style framework for Kubernetes controllers on asyncio.

A tour, bottom up (each package's docstring states its model and promises):

- `client`: configuration (kubeconfig, in-cluster), one HTTP pool per identity, typed errors,
  discovery, and a dict-based client for every verb, including server-side apply and identities
  (`for_service_account`, `impersonating`).
- `cache`: reflectors (list + watch with client-go's recovery rules), indexed stores, informers and
  the process-wide shared `Cache` with a cache-backed `CacheReader`.
- `workqueue`: deduplicating, delaying, rate-limited queues with client-go's semantics.
- `controller`: `Request`/`Result`/`TerminalError`, predicates, handlers, sources, the `Controller`
  and its front door, `Builder`.
- `manager`: the `Manager` that starts servers, caches and controllers in order, with leader
  election, health/readiness/metrics endpoints and an admission webhook server.
- `events`, `conditions`, `finalizers`, `ownerrefs`, `logging`, `tracing`, `metrics`: the helpers
  every controller needs.
- `clock`: the one source of monotonic time and timers, with a `FakeClock` for tests.
- `testing`: a real control plane, registry and pytest fixtures for embedders' tests.

A controller in full:

    async with await client.Client.connect(field_manager="greeter") as api:
        mgr = manager.Manager(api)
        await controller.Builder(mgr).for_(kinds.CONFIG_MAP).complete(my_reconciler)
        await mgr.run(handle_signals=True)

`olm_runtime` knows nothing about OLM and never imports `olm` (checked by import-linter).
"""
