"""olm-py's own binaries, built with the runtime's machinery into the same cache.

The control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok) is the
runtime's: its wrapper modules ship in olm-runtime (`olm_runtime/testing/gomod`) and
`olm_runtime.testing.binaries` builds them. This module adds, as Targets of that machinery, what only
OLM needs: kubelet and kube-proxy from the runtime's pinned Kubernetes module, and from the wrapper
modules under `gomod/` here CoreDNS, the Pod sandbox program (`pause`, a program of this
repository's own), cert-manager's controller and cainjector with its CRDs rendered from the pinned
chart, the OpenTelemetry Collector, promtool, `operator-condition` (operator-lib's `conditions`
package behind a small main, run by tests as an operator would use it), cosign (signs the
signature-policy tests' images), Toxiproxy's server (latency for the network fault drills) and
OLM v0 (the olm and
catalog operators of operator-lifecycle-manager as `olm-v0-olm` and `olm-v0-catalog`, the `opm`
of operator-registry, and v0's CRDs as `olm-v0-crds.yaml`, read from the pinned module's source),
which the migration tests run as an existing v0 cluster would (`olm_testkit.olmv0`).

Two sets of targets: `run`, what `make run` starts (the control plane, the real node's binaries,
CoreDNS, pause, cert-manager), and `test`, everything (adding otelcol, promtool, operator-condition,
cosign, Toxiproxy and OLM v0, which only tests use). `ensure_binaries(set)` returns the set's
directory of hard links to every output (every binary, `kwok-stages.yaml`,
`cert-manager-crds.yaml`, `olm-v0-crds.yaml`), building what is missing first.

The cache is the runtime's (`~/.cache/olm-runtime/bin`, see `olm_runtime.testing.binaries`), so
`python -m olm_runtime.testing binaries` and this build each target once between them; with
`$OLMPY_CACHE_DIR` set it is `$OLMPY_CACHE_DIR/bin` instead. Targets built before the cache moved
(under `~/.cache/olm-py/bin/targets`) are linked in, not rebuilt, when their key still matches.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import yaml

from olm_runtime.testing import binaries
from olm_runtime.testing.binaries import (
    BuildError,
    Target,
    combined_key,
    go_build,
    kubernetes_version,
    pin_key,
    target_key,
    target_keys,
)

# Re-exported for the rest of hack (the benchmark peers build with the same `go_build`).
__all__ = [
    "BINARIES",
    "OUTPUTS",
    "SETS",
    "TARGETS",
    "BuildError",
    "Target",
    "binary_dir",
    "cache_root",
    "cert_manager_version",
    "combined_key",
    "ensure_binaries",
    "go_build",
    "kubernetes_version",
    "pin_key",
    "target_key",
    "target_keys",
]

GOMOD_DIR = Path(__file__).resolve().parent / "gomod"
"""OLM's own wrapper modules (the control plane's ship with the runtime)."""

CERT_MANAGER_CRDS_FILE = "cert-manager-crds.yaml"
CERT_MANAGER_MODULE = "github.com/cert-manager/cert-manager"
# cert-manager ships its CRDs to users through its Helm chart, whose CRD templates are
# controller-gen output wrapped in a few Helm actions (deploy/crds is marked as "might be
# incomplete"). They are rendered from the pinned module's chart by `render_chart_crd`.
CERT_MANAGER_CHART_TEMPLATES = "deploy/charts/cert-manager/templates"
CERT_MANAGER_CRDS = (
    "cert-manager.io_certificates",
    "cert-manager.io_certificaterequests",
    "cert-manager.io_issuers",
    "cert-manager.io_clusterissuers",
    "acme.cert-manager.io_orders",
    "acme.cert-manager.io_challenges",
)

# Every Helm action the chart's CRD templates contain, and how it is rendered. Rendering is
# `helm template --set crds.enabled=true --set crds.keep=false`, done by hand because these are all
# the actions there are: `if` lines render as true and `end` lines vanish, the `keep` annotation is
# removed afterwards (it only tells Helm not to delete the CRD), and the labels include is replaced
# by `chart_crd_labels`. Any other action fails the build, so a pin bump that templates more of a
# CRD is reviewed instead of rendered wrongly.
CHART_ACTIONS = frozenset(
    {
        "{{- if or .Values.crds.enabled .Values.installCRDs }}",
        "{{- if .Values.crds.keep }}",
        '{{- include "cert-manager.crd-labels" . | nindent 4 }}',
        "{{- end }}",
    }
)
HELM_KEEP_ANNOTATION = "helm.sh/resource-policy"


def cert_manager_version() -> str:
    return binaries.required_version(GOMOD_DIR / "certmanager", CERT_MANAGER_MODULE)


def chart_crd_labels(version: str) -> dict[str, str]:
    """The labels the chart's `cert-manager.crd-labels` helper gives a CRD, for a release named
    cert-manager; the labels naming Helm itself (managed-by, helm.sh/chart) are left out."""
    return {
        "app": "cert-manager",
        "app.kubernetes.io/name": "cert-manager",
        "app.kubernetes.io/instance": "cert-manager",
        "app.kubernetes.io/component": "crds",
        "app.kubernetes.io/version": version,
    }


def render_chart_crd(template: str, *, labels: dict[str, str], source: str) -> dict[str, Any]:
    """Render one of cert-manager's chart CRD templates (see CHART_ACTIONS) into a CRD object."""
    kept = []
    for number, line in enumerate(template.splitlines(), start=1):
        if "{{" not in line:
            kept.append(line)
            continue
        if line.strip() not in CHART_ACTIONS:
            raise BuildError(f"{source}:{number}: unexpected Helm template action: {line.strip()}")
    crd = yaml.safe_load("\n".join(kept))
    if not isinstance(crd, dict) or crd.get("kind") != "CustomResourceDefinition":
        raise BuildError(f"{source} does not render to a CustomResourceDefinition")
    metadata = crd["metadata"]
    annotations = metadata.pop("annotations", None) or {}
    annotations.pop(HELM_KEEP_ANNOTATION, None)
    if annotations:
        metadata["annotations"] = annotations
    metadata["labels"] = dict(labels)
    return crd


def write_cert_manager_crds(go: str, module_dir: Path, output: Path) -> None:
    chart = binaries.module_source(go, module_dir, CERT_MANAGER_MODULE) / CERT_MANAGER_CHART_TEMPLATES
    labels = chart_crd_labels(cert_manager_version())
    crds = [
        render_chart_crd((chart / f"crd-{name}.yaml").read_text(), labels=labels, source=f"crd-{name}.yaml")
        for name in CERT_MANAGER_CRDS
    ]
    (output / CERT_MANAGER_CRDS_FILE).write_text(yaml.safe_dump_all(crds, sort_keys=False))


# The real node's kubelet and kube-proxy, from the same pinned Kubernetes module as the API server.
KUBERNETES_NODE = Target(
    module="kubernetes",
    name="kubernetes-node",
    gomod=binaries.GOMOD_DIR,
    packages=("k8s.io/kubernetes/cmd/kubelet", "k8s.io/kubernetes/cmd/kube-proxy"),
    binaries=("kubelet", "kube-proxy"),
    stamp_kubernetes_version=True,
)
CERT_MANAGER = Target(
    module="certmanager",
    gomod=GOMOD_DIR,
    # cert-manager's mains are `./controller` and `./cainjector`: each is named on its own.
    packages=("./controller", "./cainjector"),
    binaries=("cert-manager-controller", "cert-manager-cainjector"),
    rename=True,
    assets=(CERT_MANAGER_CRDS_FILE,),
    write_assets=write_cert_manager_crds,
)
COREDNS = Target(module="coredns", gomod=GOMOD_DIR, packages=(".",), binaries=("coredns",))
PAUSE = Target(module="pause", gomod=GOMOD_DIR, packages=(".",), binaries=("pause",))
# An OpenTelemetry Collector (OTLP receiver, file exporter) that the tracing tests export to.
OTELCOL = Target(module="otelcol", gomod=GOMOD_DIR, packages=(".",), binaries=("otelcol",))
# promtool checks and unit-tests the alerting rules of manifests/monitoring. Its `remove_all_sd`
# tag leaves out the cloud service-discovery SDKs, which rule checks never use and which were most
# of its cold build.
PROMTOOL = Target(
    module="promtool",
    gomod=GOMOD_DIR,
    packages=("github.com/prometheus/prometheus/cmd/promtool",),
    binaries=("promtool",),
    tags=("remove_all_sd",),
)
# operator-lib's `conditions` package, unchanged, behind a small CLI: tests run it with a Pod's view
# (olm_testkit.operatorcondition) to set OperatorCondition conditions as an operator does.
OPERATOR_CONDITION = Target(
    module="operatorcondition", gomod=GOMOD_DIR, packages=(".",), binaries=("operator-condition",)
)
# Toxiproxy's server: a TCP proxy the network fault drills put on the path between OLM's Pods and
# the registry or catalogd, adding latency (this machine's kernel has no netem).
TOXIPROXY = Target(
    module="toxiproxy",
    gomod=GOMOD_DIR,
    packages=("github.com/Shopify/toxiproxy/v2/cmd/server",),
    binaries=("toxiproxy-server",),
    rename=True,
)

OLM_V0_CRDS_FILE = "olm-v0-crds.yaml"
OLM_V0_MODULE = "github.com/operator-framework/operator-lifecycle-manager"
# v0's CRDs as its release ships them: the chart's `crds/` directory holds controller-gen output,
# one CRD a file and no Helm template actions, so the files are joined unchanged.
OLM_V0_CRDS_DIR = "deploy/chart/crds"


def write_olm_v0_crds(go: str, module_dir: Path, output: Path) -> None:
    source = binaries.module_source(go, module_dir, OLM_V0_MODULE) / OLM_V0_CRDS_DIR
    files = sorted(source.glob("*.yaml"))
    if not files:
        raise BuildError(f"no CRDs in {source}")
    documents = [path.read_text().strip() for path in files]
    (output / OLM_V0_CRDS_FILE).write_text("\n---\n".join(documents) + "\n")


# OLM v0 as upstream releases it (the olm and catalog operators, and the `opm` whose `serve` answers
# a CatalogSource's gRPC address), run by the migration tests against the local control plane. The
# operators' mains are both `cmd/<name>`: renamed so that they say which OLM they are. The tags are
# the ones upstream's Makefiles build with: `containers_image_openpgp` gives opm the pure-Go
# signature verifier of containers/image (the default one needs cgo and gpgme), and `json1` is
# sqlite's (without cgo, opm's deprecated sqlite catalogs are not readable either way).
OLM_V0 = Target(
    module="olmv0",
    gomod=GOMOD_DIR,
    packages=(
        "github.com/operator-framework/operator-lifecycle-manager/cmd/olm",
        "github.com/operator-framework/operator-lifecycle-manager/cmd/catalog",
        "github.com/operator-framework/operator-registry/cmd/opm",
    ),
    binaries=("olm-v0-olm", "olm-v0-catalog", "opm"),
    rename=True,
    tags=("json1", "containers_image_openpgp"),
    assets=(OLM_V0_CRDS_FILE,),
    write_assets=write_olm_v0_crds,
)

# cosign signs the test images of the signature-policy tests (a key pair made in the test, classic
# `.sig` signature images pushed to the local registry), as an image publisher would.
COSIGN = Target(
    module="cosign",
    gomod=GOMOD_DIR,
    packages=("github.com/sigstore/cosign/v2/cmd/cosign",),
    binaries=("cosign",),
)

RUN_TARGETS = (*binaries.CONTROL_PLANE, KUBERNETES_NODE, COREDNS, PAUSE, CERT_MANAGER)
"""What `make run` starts: the control plane, a real node with CoreDNS, cert-manager."""
TEST_TARGETS = (*RUN_TARGETS, TOXIPROXY, OTELCOL, PROMTOOL, OPERATOR_CONDITION, OLM_V0, COSIGN)
"""Everything: the tests also slow links down with Toxiproxy, export traces to otelcol, check the
alerting rules with promtool, set OperatorCondition conditions as an operator with
operator-condition, run OLM v0 to migrate from and sign images with cosign. Toxiproxy comes first:
`make test` builds these beside its sessions, and the deployed suite, which needs only Toxiproxy,
should not wait for the rest (it builds in seconds)."""
SETS = {"run": RUN_TARGETS, "test": TEST_TARGETS}
TARGETS = TEST_TARGETS

BINARIES = tuple(name for target in TARGETS for name in target.binaries)
OUTPUTS = tuple(name for target in TARGETS for name in target.outputs)


def cache_root() -> Path:
    """olm-py's own cache (`$OLMPY_CACHE_DIR` or `~/.cache/olm-py`) + `bin`: the image build and the
    benchmark peers keep theirs beside it; binaries built before the shared cache are here."""
    base = os.environ.get("OLMPY_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "olm-py"
    )
    return Path(base) / "bin"


def binaries_root() -> Path:
    """Where the targets are built: the runtime's cache, unless `$OLMPY_CACHE_DIR` relocates ours."""
    return cache_root() if os.environ.get("OLMPY_CACHE_DIR") else binaries.cache_root()


def binary_dir(targets: str = "test") -> Path:
    """The assembled directory of a set; it may not exist yet (see `ensure_binaries`)."""
    return binaries.assembled_dir(SETS[targets], binaries_root())


def _log(message: str) -> None:
    print(f"controlplane-build: {message}", file=sys.stderr, flush=True)


def ensure_binaries(targets: str = "test") -> Path:
    """Return the directory holding every output of the set `targets` (`run` or `test`), building
    the missing targets first."""
    return binaries.ensure(SETS[targets], root=binaries_root(), sources=(cache_root(),), log=_log)


if __name__ == "__main__":
    try:
        print(ensure_binaries())
    except BuildError as err:
        print(f"error: {err}", file=sys.stderr)
        sys.exit(1)
