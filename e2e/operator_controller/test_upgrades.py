"""Upgrades along real catalog graphs: version ranges and channels over replaces, skips and
skipRange edges, non-successors refused unless self-certified, and downgrades.

Where a real graph decides, the expected bundle is computed from the published catalog file
(`expected_successor`), independently of the resolver.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from e2e.operator_controller.conftest import (
    Extensions,
    ServedCatalog,
    list_revisions,
    revision_states,
    wait_event,
    wait_installed,
    wait_revisions,
)
from olm import fbc, semver
from olm.api import names
from olm_runtime import conditions
from olm_testkit.certmanager import CertManager
from olm_testkit.names import unique
from olm_testkit.plugin import Installer


def expected_successor(
    catalog_dir: Path, package: str, installed: str, *, channels: Sequence[str], version_range: str
) -> tuple[str, str]:
    """(bundle name, version) of the highest direct successor of bundle `installed` in `channels`
    within `version_range`, by the catalog's replaces, skips and skipRange edges."""
    versions: dict[str, semver.Version] = {}
    entries: list[fbc.ChannelEntry] = []
    for meta in fbc.iter_metas(catalog_dir / package):
        item = fbc.view(meta)
        if isinstance(item, fbc.Bundle) and item.version is not None:
            versions[item.name] = semver.parse_version(item.version, strict=True)
        elif isinstance(item, fbc.Channel) and item.name in channels:
            entries.extend(item.entries)
    installed_version = versions[installed]
    wanted = semver.parse_range(version_range)
    successors = {
        entry.name
        for entry in entries
        if entry.replaces == installed
        or installed in entry.skips
        or (entry.skip_range and semver.parse_skip_range(entry.skip_range).matches(installed_version))
    }
    in_range = [name for name in successors if wanted.matches(versions[name])]
    assert in_range, f"the catalog offers no successor of {installed} in {channels} within {version_range!r}"
    best = max(in_range, key=lambda name: versions[name])
    return best, str(versions[best])


def install_bundle(found: dict[str, Any]) -> dict[str, str]:
    return dict(found["status"]["install"]["bundle"])


async def _move(
    extensions: Extensions,
    served: ServedCatalog,
    name: str,
    package: str,
    installed: str,
    *,
    channels: list[str],
    version_range: str,
    timeout: float,
) -> str:
    """Change the extension's channels and range; wait for and check the graph's successor."""
    expected_name, expected_version = expected_successor(
        served.published.directory, package, installed, channels=channels, version_range=version_range
    )
    assert expected_name not in served.published.unpublished, f"{expected_name} has no image to install"
    await extensions.patch_spec(
        name, {"source": {"catalog": {"channels": channels, "version": version_range}}}
    )
    found = await wait_installed(extensions, name, expected_version, timeout=timeout)
    assert install_bundle(found) == {"name": expected_name, "version": expected_version}
    await wait_event(
        extensions.kube,
        name,
        type="Normal",
        reason="Upgraded",
        note_contains=f'replaced by "{expected_name}"',
    )
    return expected_name


async def test_sailoperator_moves_along_skip_ranges_when_range_and_channel_widen(
    namespace: str, installer: Installer, extensions: Extensions, community_catalog: ServedCatalog
) -> None:
    account = await installer(namespace)
    name = unique("sail")
    await extensions.create(
        name,
        "sailoperator",
        namespace,
        account,
        version="1.25.0",
        channels=["stable-1.25"],
        selector={"matchLabels": community_catalog.label},
    )
    found = await wait_installed(extensions, name, "1.25.0", timeout=300)
    assert install_bundle(found) == {"name": "sailoperator.v1.25.0", "version": "1.25.0"}

    # Under Strict CRD upgrade safety, sail-operator's real upgrades are refused: each release
    # changes the default `spec.version` of its CRDs. The graph is what this test is about.
    await extensions.patch_spec(name, {"source": {"catalog": {"version": "1.25.x"}}})
    found = await extensions.wait_condition(
        name,
        "Progressing",
        "True",
        reason="Retrying",
        message_contains='with version "1.25.2": validating upgrade for CRD "istiocnis.sailoperator.io": ',
    )
    message = conditions.of(found, "Progressing")["message"]
    assert 'validating upgrade for CRD "istios.sailoperator.io": ' in message
    assert "default value changed" in message
    assert install_bundle(found) == {"name": "sailoperator.v1.25.0", "version": "1.25.0"}
    no_crd_safety = {"preflight": {"crdUpgradeSafety": {"enforcement": "None"}}}
    await extensions.patch_spec(name, {"install": no_crd_safety})

    # Widening the range: 1.25.2's skipRange covers 1.25.0, so 1.25.1 is skipped.
    installed = await _move(
        extensions,
        community_catalog,
        name,
        "sailoperator",
        "sailoperator.v1.25.0",
        channels=["stable-1.25"],
        version_range="1.25.x",
        timeout=300,
    )
    assert installed == "sailoperator.v1.25.2"
    # A channel that holds newer versions: only the change of channel makes 1.26.0 reachable.
    installed = await _move(
        extensions,
        community_catalog,
        name,
        "sailoperator",
        installed,
        channels=["stable-1.26"],
        version_range="<1.26.1",
        timeout=300,
    )
    assert installed == "sailoperator.v1.26.0"

    await wait_revisions(
        extensions, name, {f"{name}-1": "Archived", f"{name}-2": "Archived", f"{name}-3": "Active"}
    )


async def install_infinispan_2_3_0(
    extensions: Extensions,
    community_catalog: ServedCatalog,
    name: str,
    *,
    namespace: str,
    account: str,
    upgrade: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """infinispan 2.3.0 from the stable channel, installed; the extension."""
    await extensions.create(
        name,
        "infinispan",
        namespace,
        account,
        version="2.3.0",
        channels=["stable"],
        selector={"matchLabels": community_catalog.label},
        # Under Strict, 2.3.8 is refused: its CRDs add `x-kubernetes-map-type: atomic`, a change
        # the safety checks do not handle.
        crd_safety="None",
        upgrade=upgrade,
    )
    return await wait_installed(extensions, name, "2.3.0", timeout=300)


async def test_infinispan_follows_skips_then_replaces(
    namespace: str,
    installer: Installer,
    extensions: Extensions,
    community_catalog: ServedCatalog,
    cert_manager: CertManager,
) -> None:
    account = await installer(namespace)
    name = unique("infinispan")
    # 2.3.8 grants more than 2.3.0, which the permission-growth gate holds by default
    # (test_permission_growth); the graph is what this test is about.
    allow = {"permissionGrowth": "Allow"}
    found = await install_infinispan_2_3_0(
        extensions, community_catalog, name, namespace=namespace, account=account, upgrade=allow
    )
    assert install_bundle(found) == {"name": "infinispan-operator.v2.3.0", "version": "2.3.0"}

    # 2.3.1 ... 2.3.7 are in range but no successor of 2.3.0: 2.3.8 skips it.
    installed = await _move(
        extensions,
        community_catalog,
        name,
        "infinispan",
        "infinispan-operator.v2.3.0",
        channels=["stable"],
        version_range="2.3.x",
        timeout=300,
    )
    assert installed == "infinispan-operator.v2.3.8"
    # 2.4.0 replaces 2.3.8.
    installed = await _move(
        extensions,
        community_catalog,
        name,
        "infinispan",
        installed,
        channels=["stable"],
        version_range="<2.4.1",
        timeout=300,
    )
    assert installed == "infinispan-operator.v2.4.0"


async def test_non_successor_is_refused_until_self_certified(
    namespace: str, installer: Installer, extensions: Extensions, fixture_catalog: ServedCatalog
) -> None:
    account = await installer(namespace)
    name = unique("test")
    await extensions.create(
        name, "test", namespace, account, version="1.0.0", selector={"matchLabels": fixture_catalog.label}
    )
    await wait_installed(extensions, name, "1.0.0")

    # 1.2.0 replaces 1.0.1, not 1.0.0.
    await extensions.patch_spec(name, {"source": {"catalog": {"version": "1.2.0"}}})
    found = await extensions.wait_condition(
        name,
        "Progressing",
        "True",
        reason="Retrying",
        message_contains='error upgrading from currently installed version "1.0.0": '
        'no bundles found for package "test" matching version "1.2.0"',
    )
    message = (
        'error upgrading from currently installed version "1.0.0": '
        'no bundles found for package "test" matching version "1.2.0"'
    )
    assert conditions.of(found, "Progressing")["message"] == message
    # Why, catalog by catalog, and what to do: in the Event of the change. Other tests' catalogs in
    # the session are counted as not selected; how many depends on them.
    event = await wait_event(extensions.kube, name, type="Warning", reason="Failed", note_contains=message)
    assert re.fullmatch(
        re.escape(
            f"{message}; catalogs: {fixture_catalog.name} "
            "(no successor of 1.0.0 in range, highest successor 1.0.1)"
        )
        + r"(; \d+ not selected by spec\.source\.catalog\.selector)?"
        + re.escape(
            "; request a successor version, or set upgradeConstraintPolicy: SelfCertified to skip the graph"
        ),
        str(event["note"]),
    )
    assert install_bundle(found) == {"name": "test-operator.1.0.0", "version": "1.0.0"}
    assert conditions.of(found, "Installed")["status"] == "True"
    assert revision_states(await list_revisions(extensions.kube, name)) == {f"{name}-1": "Active"}

    await extensions.patch_spec(name, {"source": {"catalog": {"upgradeConstraintPolicy": "SelfCertified"}}})
    found = await wait_installed(extensions, name, "1.2.0")
    assert install_bundle(found) == {"name": "test-operator.1.2.0", "version": "1.2.0"}
    await wait_event(
        extensions.kube,
        name,
        type="Normal",
        reason="Upgraded",
        note_contains='bundle "test-operator.1.0.0" (1.0.0) replaced by "test-operator.1.2.0" (1.2.0)',
    )
    await wait_revisions(extensions, name, {f"{name}-1": "Archived", f"{name}-2": "Active"})


async def test_downgrade_when_self_certified_without_crd_safety(
    namespace: str, installer: Installer, extensions: Extensions, fixture_catalog: ServedCatalog
) -> None:
    account = await installer(namespace)
    name = unique("test")
    await extensions.create(
        name, "test", namespace, account, version="1.2.0", selector={"matchLabels": fixture_catalog.label}
    )
    await wait_installed(extensions, name, "1.2.0")

    await extensions.patch_spec(
        name,
        {
            "source": {"catalog": {"version": "1.0.0", "upgradeConstraintPolicy": "SelfCertified"}},
            "install": {"preflight": {"crdUpgradeSafety": {"enforcement": "None"}}},
        },
    )
    found = await wait_installed(extensions, name, "1.0.0")
    assert install_bundle(found) == {"name": "test-operator.1.0.0", "version": "1.0.0"}
    revisions = await wait_revisions(extensions, name, {f"{name}-1": "Archived", f"{name}-2": "Active"})
    assert revisions[1]["metadata"]["annotations"][names.BUNDLE_VERSION_LABEL] == "1.0.0"
    await wait_event(
        extensions.kube,
        name,
        type="Normal",
        reason="Upgraded",
        note_contains='bundle "test-operator.1.2.0" (1.2.0) replaced by "test-operator.1.0.0" (1.0.0)',
    )
