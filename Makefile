# Everything runs inside the locked uv environment; `hack/install-deps.sh` prepares a fresh machine.
export UV_PYTHON_DOWNLOADS := never
UV_RUN := uv run --frozen
PYTEST := $(UV_RUN) pytest
# `make run CLUSTER=kind` deploys into a kind cluster (machines with docker or podman, and kind).
CLUSTER ?= local

.PHONY: help deps run run-processes test unit e2e e2e-deployed lint fmt manifests docs docs-serve stats bench-runtime bench-cos bench-catalogd bench-signatures bench-install bench-tracing bench-olmctl bench-scale cluster-binaries cluster-up cluster-down cluster-status image release fuzz soak flake-hunt bench-upstream bench-rest bench-memory

help:
	@echo "make run            local control plane + real node, cert-manager, OLM deployed from manifests/, one extension installed"
	@echo "make run CLUSTER=kind   the same on a kind cluster (needs docker or podman, and kind)"
	@echo "make run-processes  the same with catalogd and operator-controller as local processes (fast iteration)"
	@echo "make test           unit + e2e tests, then the deployed suite (each starts its own control plane)"
	@echo "make unit | e2e | e2e-deployed   one part of the tests"
	@echo "make image          build the OLM image here (no Docker) and push it to the make-run registry if up"
	@echo "make release        release artifacts of HEAD into build/release/<tag>/: install.yaml, image archive, wheels (IMAGE=name)"
	@echo "make lint           ruff, mypy, import contracts, generated files up to date, the docs site builds"
	@echo "make manifests      regenerate the CRDs under manifests/crds from olm/api, and their reference pages"
	@echo "make docs           build the documentation site into build/site (strict: broken links fail)"
	@echo "make docs-serve     serve the documentation site on http://127.0.0.1:8000 with live reload"
	@echo "make stats          module lengths and test-to-source ratio per package"
	@echo "make bench-runtime  olm_runtime against controller-runtime and kopf (figures, not tests)"
	@echo "make bench-cos      ClusterObjectSet rollout times and API requests (figures, not tests)"
	@echo "make bench-catalogd catalogd unpack time, memory, download and query latency (figures)"
	@echo "make bench-signatures catalogd ingest with and without a signature policy (figures)"
	@echo "make bench-install  operator-controller install and resolution times, memory, requests, installs against their floor (figures)"
	@echo "make bench-tracing  install time, CPU and memory of operator-controller with tracing off vs on (figures)"
	@echo "make bench-olmctl   olmctl --help, search, list, status: wall and CPU time, now vs HEAD (figures)"
	@echo "make bench-scale    the scale model's inputs at 200, 500 and 1,000 extensions, both drift-watch modes (figures)"
	@echo "make bench-rest     the API requests OLM sends at rest, idle and on a loaded machine (figures)"
	@echo "make bench-memory   what one extension costs operator-controller, by allocation site (tracemalloc; figures)"
	@echo "make bench-upstream ours against upstream OLM v1.11.0 side by side (needs OLMPY_UPSTREAM_BOXCUTTER; figures)"
	@echo "make fuzz           coverage-guided fuzzing of the untrusted-input parsers (FUZZ_RUNS per target; not in make test)"
	@echo "make soak           the fault drills (e2e/faults, the network drills) at full size, printing their figures (not in make test)"
	@echo "make flake-hunt DIR=e2e/x RUNS=10   one test directory in a loop, random order, CPU busy; failures counted"
	@echo "make cluster-up | cluster-down | cluster-status"

# Which pinned binaries `deps` builds: `run`, what `make run` starts (control plane, real node,
# CoreDNS, pause, cert-manager), or `test`, which adds the test-only tools (otelcol, promtool,
# operator-condition, OLM v0, cosign, Toxiproxy). `make test` builds those itself, beside its first
# session (below).
BINARIES ?= run

deps:
	hack/install-deps.sh $(BINARIES)

# A kind machine needs docker (or podman), kind and kubectl, not the local control plane's packages.
ifeq ($(CLUSTER),kind)
run:
	$(UV_RUN) python -m hack.kind up
else
run: deps
	$(UV_RUN) python -m hack.run up
endif

run-processes: deps
	$(UV_RUN) python -m hack.run up --processes

# Three pytest sessions, each with its own control plane: the deployed suite runs OLM as Pods, the
# others run it as processes, and two operator-controllers must never share a cluster. The first
# runs the unit tests and $(RANDOM_ORDER_E2E) in random order (pytest-randomly prints its seed at
# the top; `-p randomly --randomly-seed=N` replays it), so a test that depends on another's leftovers
# fails as soon as it is written. The deployed suite runs beside the second session: both mostly
# wait on controllers and Pods (the second alone keeps about one core of two busy), and they share
# nothing but the machine. Its output goes to $(DEPLOYED_LOG) and is printed when both are done, so
# the two sessions' lines do not interleave. A failed session does not stop the others: all three
# report, and the target fails at the end naming the sessions that failed. Each prints its 20
# slowest tests.
#
# The test-only tools (otelcol, promtool, operator-condition, OLM v0, cosign, Toxiproxy) are built
# beside the sessions at the lowest CPU priority, so on a machine that lacks them the tests keep
# their cores and the build takes what they leave. No session waits for the whole build: the modules
# that use a tool run as late as they may (tools_last in e2e/conftest.py), and a tool still being
# built when one needs it is waited for there (the build cache's lock per target). The target waits
# for the build at the end and fails if it failed.
RANDOM_ORDER_E2E := e2e/runtime
SLOWEST := --durations=20
DEPLOYED_LOG := build/test-deployed.log
TOOLS_LOG := build/test-tools.log
test: deps
	@failed=""; mkdir -p $(dir $(DEPLOYED_LOG)); \
	nice -n 19 $(UV_RUN) python -m hack.controlplane build --set test > $(TOOLS_LOG) 2>&1 & tools=$$!; \
	$(PYTEST) $(SLOWEST) -p randomly unit hack/tests $(RANDOM_ORDER_E2E) || failed="$$failed unit+$(RANDOM_ORDER_E2E)"; \
	echo "make test: e2e/deployed runs beside the next session; its output follows it (live: $(DEPLOYED_LOG))"; \
	$(PYTEST) $(SLOWEST) e2e/deployed > $(DEPLOYED_LOG) 2>&1 & deployed=$$!; \
	$(PYTEST) $(SLOWEST) e2e --ignore=e2e/deployed --ignore=$(RANDOM_ORDER_E2E) || failed="$$failed e2e"; \
	wait $$deployed || failed="$$failed e2e/deployed"; \
	if ! wait $$tools; then cat $(TOOLS_LOG); failed="$$failed test-tools-build"; fi; \
	echo "make test: the output of e2e/deployed:"; cat $(DEPLOYED_LOG); \
	if [ -n "$$failed" ]; then echo "make test: failed sessions:$$failed"; exit 1; fi; \
	echo "make test: all sessions passed"

unit: deps
	$(PYTEST) unit hack/tests

e2e: deps
	$(PYTEST) e2e --ignore=e2e/deployed

e2e-deployed: deps
	$(PYTEST) e2e/deployed

lint: deps
	$(UV_RUN) ruff check .
	$(UV_RUN) ruff format --check .
	$(UV_RUN) mypy
	$(UV_RUN) lint-imports
	$(UV_RUN) python -m hack.crdgen --check
	$(UV_RUN) python -m hack.apidocs --check
	$(MAKE) docs

image: deps
	$(UV_RUN) python -m hack.image --dev-registry

# IMAGE: the name install.yaml pins the image digest to (default: the one manifests/ uses).
release: deps
	$(UV_RUN) python -m hack.release $(if $(IMAGE),--image $(IMAGE))

manifests:
	$(UV_RUN) python -m hack.crdgen
	$(UV_RUN) python -m hack.apidocs

# The theme's banner about its end of life is noise in every build; the site itself is unaffected.
DOCS_ENV := NO_MKDOCS_2_WARNING=1

docs:
	$(DOCS_ENV) $(UV_RUN) mkdocs build --strict

docs-serve:
	$(DOCS_ENV) $(UV_RUN) mkdocs serve --strict --dev-addr 127.0.0.1:8000

stats:
	$(UV_RUN) python -m hack.codestats

fmt:
	$(UV_RUN) ruff format .
	$(UV_RUN) ruff check --fix .

bench-runtime: deps
	$(UV_RUN) python -m hack.bench.runtime.compare
	$(UV_RUN) python -m hack.bench.runtime.workqueue_ops
	$(UV_RUN) python -m hack.bench.runtime.cache_sync

bench-catalogd: deps
	$(UV_RUN) python -m hack.bench.catalogd.serve

# catalogd ingest of a certified-sized catalog with and without a sigstoreSigned policy (signs with
# cosign, one of the test binaries).
bench-signatures: BINARIES = test
bench-signatures: deps
	$(UV_RUN) python -m hack.bench.catalogd.signatures

bench-cos: deps
	$(UV_RUN) python -m hack.bench.cos.rollout

bench-install: deps
	$(UV_RUN) python -m hack.bench.install.run
	$(UV_RUN) python -m hack.bench.install.floor

bench-tracing: deps
	$(UV_RUN) python -m hack.bench.install.tracing

# BENCH_OLMCTL_ARGS: e.g. `--runs 15` or `--before none` (the comparison checks out HEAD in a git worktree).
BENCH_OLMCTL_ARGS ?=
bench-olmctl: deps
	$(UV_RUN) python -m hack.bench.olmctl $(BENCH_OLMCTL_ARGS)

# Upstream's Go build needs a checkout of boxcutter v0.14.0 named by OLMPY_UPSTREAM_BOXCUTTER (the
# module proxy refuses that module); without it the run says "peer unavailable" and measures ours.
BENCH_UPSTREAM_ARGS ?=
bench-scale: deps
	$(UV_RUN) python -m hack.bench.scale $(BENCH_SCALE_ARGS)

bench-rest: deps
	$(UV_RUN) python -m hack.bench.rest $(BENCH_REST_ARGS)

# BENCH_MEMORY_ARGS: e.g. "--extensions 200 --key traceback" or "--shared-drift-watches".
bench-memory: deps
	$(UV_RUN) python -m hack.bench.memory $(BENCH_MEMORY_ARGS)

bench-upstream: deps
	$(UV_RUN) python -m hack.bench.upstream.run $(BENCH_UPSTREAM_ARGS)

# atheris (libFuzzer) on the parsers of untrusted input; corpus and findings under build/fuzz.
FUZZ_RUNS ?= 100000
fuzz:
	$(UV_RUN) --group fuzz python -m hack.fuzz --runs $(FUZZ_RUNS)

# The fault drills at full size (OLMPY_SOAK=1); `make test` runs them smaller. Figures are printed.
# The network drills run OLM as Pods, so they need a session (and control plane) of their own.
soak: BINARIES = test
soak: deps
	OLMPY_SOAK=1 $(PYTEST) -s e2e/faults
	OLMPY_SOAK=1 $(PYTEST) -s e2e/deployed/test_network_faults.py

# One test directory RUNS times, each a session of its own in random order, beside a busy process
# (BUSY of them): prints per failing test how often and with which seeds. Not part of make test.
DIR ?= e2e/runtime
RUNS ?= 10
BUSY ?= 1
flake-hunt: deps
	$(UV_RUN) python -m hack.flakehunt $(DIR) --runs $(RUNS) --busy $(BUSY)

# Every pinned binary (`python -m olm_runtime.testing binaries` builds only the control plane's).
cluster-binaries:
	$(UV_RUN) python -m hack.controlplane build --set test

cluster-up: deps
	$(UV_RUN) python -m hack.controlplane up

cluster-down:
ifeq ($(CLUSTER),kind)
	$(UV_RUN) python -m hack.kind down
else
	$(UV_RUN) python -m hack.run down
endif

cluster-status:
	$(UV_RUN) python -m hack.controlplane status
