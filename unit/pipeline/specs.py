"""The ClusterExtension spec the pipeline's gate and resolution tests plan for: package `x` in
namespace `ns` as ServiceAccount `sa`, with the `spec.upgrade` and `spec.source.catalog` a test
varies; and the installed bundle and the update the update gates are asked about."""

from __future__ import annotations

from olm.api.extensionspec import CatalogSource, CRDUpgradeSafetyEnforcement, ExtensionSpec, UpgradeSpec
from olm.pipeline.resolve import Installed, ResolvedBundle

INSTALLED = Installed(name="x.v1.0.0", version="1.0.0")
CANDIDATE = ResolvedBundle(package="x", name="x.v1.1.0", version="1.1.0", image="img", catalog="c")


def extension_spec(upgrade: UpgradeSpec | None = None, catalog: CatalogSource | None = None) -> ExtensionSpec:
    return ExtensionSpec(
        namespace="ns",
        service_account="sa",
        catalog=catalog or CatalogSource(package_name="x"),
        config=None,
        crd_upgrade_safety=CRDUpgradeSafetyEnforcement.STRICT,
        progress_deadline_minutes=None,
        upgrade=upgrade or UpgradeSpec(),
    )
