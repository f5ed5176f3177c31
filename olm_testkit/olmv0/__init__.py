"""OLM v0 (operator-lifecycle-manager v0.38.0 and opm of operator-registry v1.61.0, unchanged) run
against a local control plane, as the cluster that a migration to OLM v1 starts from.

The pieces, in the order a test uses them:

- `running(control_plane, kube, workdir, binary_dir)` -> `OlmV0` (`operators`): v0's CRDs, the
  `olm` namespace, the OLMConfig `cluster` with copied CSVs disabled, the olm and catalog operators
  (from `binary_dir`, the `test` set) synced; stopped when the block ends.
- `write_catalog(directory, [real_package("kube-green"), ...])` (`fbc`): an FBC directory from real
  registry+v1 bundle directories, each bundle's manifests inline, which is how v0 installs a bundle
  without running an unpack Job (kwok's nodes run no Pods).
- `await v0.serve_catalog(directory)` -> address: `opm serve` on the host until v0 stops, and
  `create_catalog_source(kube, name, address)` (`catalog`): a `grpc` CatalogSource naming it,
  returned once READY.
- `install(kube, InstallRequest(...), namespace=...)` -> `Installation` (`install`): OperatorGroup,
  Subscription, approval, CSV Succeeded, Deployments Available; `proposed_upgrade(kube,
  installation)` -> `ProposedUpgrade`, once v0 proposes the next bundle of a Manual installation;
  `uninstall(kube, namespace)`
  (`removal`) removes what v0 installed there, CRDs and cluster-scoped objects included.

Promises: v0 runs as its release builds it, against the control plane's admin kubeconfig; no Pod
or Job is needed for anything above; a wait that times out says what it waited for and the state it
saw (and the operators' logs are in the report of a failed test whose fixture holds the `OlmV0`).
Not promised: v0's health and metrics ports (fixed by v0, see `operators`), or packages with
dependencies (`write_catalog` refuses them).
"""

from olm_testkit.olmv0 import kinds
from olm_testkit.olmv0.catalog import (
    CatalogServer,
    create_catalog_source,
    delete_catalog_source,
    validate,
)
from olm_testkit.olmv0.fbc import (
    CatalogBundle,
    CatalogError,
    CatalogPackage,
    package_blobs,
    real_package,
    write_catalog,
)
from olm_testkit.olmv0.install import (
    Approval,
    Installation,
    InstallMode,
    InstallRequest,
    ProposedUpgrade,
    install,
    proposed_upgrade,
)
from olm_testkit.olmv0.operators import OlmV0, OperatorProcess, running
from olm_testkit.olmv0.removal import uninstall

__all__ = [
    "Approval",
    "CatalogBundle",
    "CatalogError",
    "CatalogPackage",
    "CatalogServer",
    "InstallMode",
    "InstallRequest",
    "Installation",
    "OlmV0",
    "OperatorProcess",
    "ProposedUpgrade",
    "create_catalog_source",
    "delete_catalog_source",
    "install",
    "kinds",
    "package_blobs",
    "proposed_upgrade",
    "real_package",
    "running",
    "uninstall",
    "validate",
    "write_catalog",
]
