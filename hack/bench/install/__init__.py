"""operator-controller benchmark: install times, resolution latency, memory, requests per reconcile.

`run` is the entry point (`make bench-install`); `synthetic` writes, publishes and installs the small
bundles it installs by the dozen. `tracing` and `watches` are benches of their own; what they share
with `run` is in `hack.bench.cluster` (the setup) and `hack.bench.measure` (the readings)."""
