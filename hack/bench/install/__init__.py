"""operator-controller benchmark: install times, resolution latency, memory, requests per reconcile.

`run` is the entry point (`make bench-install`); `synthetic` writes the small bundles it installs
by the dozen."""
