# Everything runs inside the locked uv environment; `hack/install-deps.sh` prepares a fresh machine.
export UV_PYTHON_DOWNLOADS := never
UV_RUN := uv run --frozen
PYTEST := $(UV_RUN) pytest

.PHONY: help deps run test unit e2e lint fmt manifests bench-runtime bench-cos bench-catalogd bench-install cluster-binaries cluster-up cluster-down cluster-status

help:
	@echo "make run            local control plane, cert-manager, catalogd, operator-controller, one extension installed"
	@echo "make test           unit + e2e tests (starts its own control plane)"
	@echo "make unit | e2e     one half of the tests"
	@echo "make lint           ruff, mypy, import contracts, generated files up to date"
	@echo "make manifests      regenerate the CRDs under manifests/crds from olm/api"
	@echo "make bench-runtime  olm_runtime against controller-runtime and kopf (figures, not tests)"
	@echo "make bench-cos      ClusterObjectSet rollout times and API requests (figures, not tests)"
	@echo "make bench-catalogd catalogd unpack time, memory, download and query latency (figures)"
	@echo "make bench-install  operator-controller install and resolution times, memory, requests (figures)"
	@echo "make cluster-up | cluster-down | cluster-status"

deps:
	hack/install-deps.sh

run: deps
	$(UV_RUN) python -m hack.run up

test: deps
	$(PYTEST) unit e2e

unit: deps
	$(PYTEST) unit

e2e: deps
	$(PYTEST) e2e

lint: deps
	$(UV_RUN) ruff check .
	$(UV_RUN) ruff format --check .
	$(UV_RUN) mypy
	$(UV_RUN) lint-imports
	$(UV_RUN) python -m hack.crdgen --check

manifests:
	$(UV_RUN) python -m hack.crdgen

fmt:
	$(UV_RUN) ruff format .
	$(UV_RUN) ruff check --fix .

bench-runtime: deps
	$(UV_RUN) python -m hack.bench.runtime.compare
	$(UV_RUN) python -m hack.bench.runtime.workqueue_ops
	$(UV_RUN) python -m hack.bench.runtime.cache_sync

bench-catalogd: deps
	$(UV_RUN) python -m hack.bench.catalogd.serve

bench-cos: deps
	$(UV_RUN) python -m hack.bench.cos.rollout

bench-install: deps
	$(UV_RUN) python -m hack.bench.install.run

cluster-binaries:
	$(UV_RUN) python -m hack.controlplane build

cluster-up: deps
	$(UV_RUN) python -m hack.controlplane up

cluster-down:
	$(UV_RUN) python -m hack.run down

cluster-status:
	$(UV_RUN) python -m hack.controlplane status
