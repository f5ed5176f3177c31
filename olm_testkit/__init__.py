"""OLM's test kit: what the unit tests, the e2e suites and the benchmarks share.

A pytest plugin (`olm_testkit.plugin`, registered by the top-level conftest.py) with the fixtures the
suites use, and the helpers behind them. It builds on the runtime's kit (`olm_runtime.testing`: the
control plane, the registry, polling and settling) and adds what only OLM's tests need. It is not
part of either distribution: nothing in `olm` or `olm_runtime` imports it, and it imports nothing
from `hack/`, which is tooling only.
"""
