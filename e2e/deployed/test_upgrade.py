"""Upgrading OLM itself: the previous release was deployed, kube-green (webhooks, CRDs, all
namespaces) and cat-facts-operator (own namespace) installed with it, then this checkout's release
applied over it, then the previous release again (the `olm_upgrade` fixture records the cluster
before, after the upgrade and after the rollback)."""

from __future__ import annotations

from e2e.deployed import upgrade
from e2e.deployed.conftest import UPGRADE_EXTENSIONS, Figures, UpgradeRecord


async def test_the_upgrade_started_from_an_earlier_build_with_extensions_installed(
    olm_upgrade: UpgradeRecord, figures: Figures
) -> None:
    before = olm_upgrade.before
    assert olm_upgrade.previous != olm_upgrade.installed.image
    assert {version for version, _ in before.extensions.values()} == {
        v for v, _ in UPGRADE_EXTENSIONS.values()
    }
    assert all(active for _, active in before.extensions.values()), before.extensions
    assert before.objects
    assert before.pods
    assert before.secrets
    kinds_ = {key.split(" ", 1)[0] for key in before.objects}
    assert {"CustomResourceDefinition", "Deployment", "ValidatingWebhookConfiguration"} <= kinds_, kinds_
    figures.add(
        "upgrade: extensions / revisions / managed objects / Pods",
        f"{len(before.extensions)} / {len(before.revisions)} / {len(before.objects)} / {len(before.pods)}",
    )
    figures.add("upgrade: from", olm_upgrade.previous)
    figures.add(
        "upgrade: new operator-controller leads and has reconciled", f"{olm_upgrade.reconciled.seconds:.1f} s"
    )


async def test_the_upgrade_rewrites_no_extension_object_and_restarts_no_pod(
    olm_upgrade: UpgradeRecord,
) -> None:
    changed = upgrade.differences(olm_upgrade.before, olm_upgrade.after)
    assert changed == {part: [] for part in changed}, changed


async def test_olms_own_crds_pass_the_upgrade_safety_rules_it_applies_to_extensions(
    olm_upgrade: UpgradeRecord,
) -> None:
    assert olm_upgrade.crd_violations, "OLM's CRDs were checked"
    assert olm_upgrade.crd_violations == {name: [] for name in olm_upgrade.crd_violations}


async def test_rolling_olm_back_to_the_previous_release_leaves_the_extensions_alone(
    olm_upgrade: UpgradeRecord,
) -> None:
    changed = upgrade.differences(olm_upgrade.before, olm_upgrade.rolled_back)
    assert changed == {part: [] for part in changed}, changed


async def test_catalogs_keep_serving_the_same_content_across_the_upgrade(olm_upgrade: UpgradeRecord) -> None:
    before, after = olm_upgrade.catalog_sources
    assert "@sha256:" in before
    assert after == before
