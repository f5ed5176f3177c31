"""Updates beyond the installed bundle: what is reachable, what is newest, and what `spec.upgrade`
lets apply, on small synthetic catalogs (`plan.choose` over them, as the controller calls it)."""

from __future__ import annotations

import pytest

from olm import semver
from olm.api import conditions as api
from olm.api.extensionspec import (
    AutomaticUpdates,
    CatalogSource,
    ExtensionSpec,
    UpgradeConstraintPolicy,
    UpgradeSpec,
)
from olm.pipeline import plan, resolve
from olm.pipeline.catalogs import PackageContent
from olm.pipeline.catalogs.gathering import CatalogContent, Gathered
from unit.pipeline.resolve.catalogs import chain, content
from unit.pipeline.specs import extension_spec

# 0.7.0 -> 0.7.1 -> 0.7.2 -> 0.8.0 -> 1.0.0 one step at a time; 0.7.2 also skips 0.7.0.
GRAPH = content(
    channels={
        "stable": [
            {"name": "x.v0.7.0"},
            {"name": "x.v0.7.1", "replaces": "x.v0.7.0"},
            {"name": "x.v0.7.2", "replaces": "x.v0.7.1", "skips": ["x.v0.7.0"]},
            {"name": "x.v0.8.0", "replaces": "x.v0.7.2"},
            {"name": "x.v1.0.0", "replaces": "x.v0.8.0"},
        ]
    }
)
INSTALLED = resolve.Installed(name="x.v0.7.0", version="0.7.0")


def catalogs(*packages: PackageContent) -> tuple[CatalogContent, ...]:
    return tuple(CatalogContent(name=f"c{i}", priority=0, content=p) for i, p in enumerate(packages))


def spec(
    automatic: AutomaticUpdates = AutomaticUpdates.ANY,
    approved: str | None = None,
    *,
    version: str | None = None,
    policy: UpgradeConstraintPolicy = UpgradeConstraintPolicy.CATALOG_PROVIDED,
) -> ExtensionSpec:
    return extension_spec(
        UpgradeSpec(automatic=automatic, approved_version=approved),
        CatalogSource(package_name="x", version=version, upgrade_constraint_policy=policy),
    )


def choose(
    extension: ExtensionSpec,
    installed: resolve.Installed | None = INSTALLED,
    packages: tuple[PackageContent, ...] = (GRAPH,),
) -> plan.Choice:
    gathered = Gathered(contents=catalogs(*packages), skipped=(), not_selected=())
    return plan.choose(plan.Request(extension="e", spec=extension, installed=installed), gathered)


@pytest.mark.parametrize(
    ("automatic", "candidate", "allowed"),
    [
        pytest.param(AutomaticUpdates.ANY, "2.0.0", True, id="any-major"),
        pytest.param(AutomaticUpdates.ANY, "0.6.0", True, id="any-downgrade"),
        pytest.param(AutomaticUpdates.MINOR, "0.9.0", True, id="minor-minor"),
        pytest.param(AutomaticUpdates.MINOR, "0.7.9", True, id="minor-patch"),
        pytest.param(AutomaticUpdates.MINOR, "1.0.0", False, id="minor-major"),
        pytest.param(AutomaticUpdates.PATCH, "0.7.9", True, id="patch-patch"),
        pytest.param(AutomaticUpdates.PATCH, "0.8.0", False, id="patch-minor"),
        pytest.param(AutomaticUpdates.PATCH, "0.6.9", False, id="patch-downgrade"),
        pytest.param(AutomaticUpdates.NONE, "0.7.1", False, id="none-patch"),
    ],
)
def test_the_policy_classes_an_update_against_the_installed_version(
    automatic: AutomaticUpdates, candidate: str, allowed: bool
) -> None:
    installed = semver.parse_version("0.7.0")
    assert resolve.allowed_by_policy(automatic, installed, semver.parse_version(candidate)) is allowed


@pytest.mark.parametrize(
    ("installed", "candidate", "kind"),
    [
        ("1.0.0", "1.0.1", "patch"),
        ("1.0.0", "1.2.0", "minor"),
        ("1.9.9", "2.0.0", "major"),
        ("1.2.0", "1.1.0", "downgrade"),
        ("1.0.0-rc.1", "1.0.0", "patch"),
    ],
)
def test_update_class(installed: str, candidate: str, kind: str) -> None:
    assert resolve.update_class(semver.parse_version(installed), semver.parse_version(candidate)) == kind


def test_reachable_bundles_come_with_their_shortest_path() -> None:
    source = CatalogSource(package_name="x")
    paths = resolve.reachable(source, INSTALLED, catalogs(GRAPH)[0])
    assert paths == {
        "x.v0.7.1": ("x.v0.7.1",),
        "x.v0.7.2": ("x.v0.7.2",),  # skips 0.7.0: one step
        "x.v0.8.0": ("x.v0.7.2", "x.v0.8.0"),
        "x.v1.0.0": ("x.v0.7.2", "x.v0.8.0", "x.v1.0.0"),
    }
    narrowed = CatalogSource(package_name="x", version="<0.8.0")
    assert set(resolve.reachable(narrowed, INSTALLED, catalogs(GRAPH)[0])) == {"x.v0.7.1", "x.v0.7.2"}


def test_the_newest_update_is_found_whatever_the_policy_holds() -> None:
    choice = choose(spec(AutomaticUpdates.PATCH))
    assert choice.resolution is not None
    assert choice.resolution.bundle.name == "x.v0.7.2"  # the newest patch one step away
    assert choice.updates is not None
    available = choice.updates.available
    assert available is not None
    assert (available.bundle.name, available.path) == ("x.v1.0.0", ("x.v0.7.2", "x.v0.8.0", "x.v1.0.0"))
    assert choice.updates.held is None  # the step resolution takes today is a patch: nothing held


def test_a_policy_holds_the_step_beyond_it_and_keeps_what_is_installed() -> None:
    installed = resolve.Installed(name="x.v0.7.2", version="0.7.2")
    choice = choose(spec(AutomaticUpdates.PATCH), installed)
    assert choice.resolution is not None
    assert choice.resolution.bundle.name == "x.v0.7.2"
    assert choice.updates is not None
    held = choice.updates.held
    assert held is not None
    assert (held.bundle.name, held.reason) == ("x.v0.8.0", api.REASON_OUTSIDE_POLICY)
    assert held.message == (
        'bundle "x.v0.8.0" (0.8.0) is a minor update from 0.7.2 and spec.upgrade.automatic is Patch: '
        "set spec.upgrade.approvedVersion to 0.8.0 to apply it, or widen spec.upgrade.automatic"
    )


def test_none_holds_every_update_for_approval() -> None:
    choice = choose(spec(AutomaticUpdates.NONE))
    assert choice.resolution is not None
    assert choice.resolution.bundle.name == "x.v0.7.0"
    assert choice.updates is not None
    assert choice.updates.held is not None
    assert choice.updates.held.reason == api.REASON_APPROVAL_REQUIRED
    assert choice.updates.held.bundle.name == "x.v0.7.2"


def test_an_approval_means_the_version_it_names_not_a_newer_one() -> None:
    # 0.8.0 approved while 1.0.0 is there too: the path to 0.8.0 is taken, one step at a time.
    choice = choose(spec(AutomaticUpdates.NONE, approved="0.8.0"))
    assert choice.resolution is not None
    assert choice.resolution.bundle.name == "x.v0.7.2"  # the first hop towards 0.8.0
    then = choose(
        spec(AutomaticUpdates.NONE, approved="0.8.0"), resolve.Installed(name="x.v0.7.2", version="0.7.2")
    )
    assert then.resolution is not None
    assert then.resolution.bundle.name == "x.v0.8.0"
    done = choose(
        spec(AutomaticUpdates.NONE, approved="0.8.0"), resolve.Installed(name="x.v0.8.0", version="0.8.0")
    )
    assert done.resolution is not None
    assert done.resolution.bundle.name == "x.v0.8.0"  # not 1.0.0
    assert done.updates is not None
    assert done.updates.held is not None
    assert done.updates.held.bundle.name == "x.v1.0.0"
    assert done.updates.unreachable_approval is None  # satisfied


@pytest.mark.parametrize(
    ("approved", "extension_version", "why"),
    [
        pytest.param("0.9.0", None, "no bundle of that version", id="not-in-catalog"),
        pytest.param("1.0.0", "<0.9.0", "no bundle of that version", id="outside-the-range"),
        pytest.param("0.6.0", None, "no bundle of that version", id="older"),
    ],
)
def test_an_approval_that_cannot_be_reached_is_reported_and_changes_nothing(
    approved: str, extension_version: str | None, why: str
) -> None:
    choice = choose(spec(AutomaticUpdates.NONE, approved=approved, version=extension_version))
    assert choice.resolution is not None
    assert choice.resolution.bundle.name == "x.v0.7.0"
    assert choice.updates is not None
    message = choice.updates.unreachable_approval
    assert message is not None
    assert message.startswith(
        f"spec.upgrade.approvedVersion {approved} cannot be installed from 0.7.0: {why}"
    )


def test_a_first_install_is_never_held() -> None:
    choice = choose(spec(AutomaticUpdates.NONE), installed=None)
    assert choice.resolution is not None
    assert choice.resolution.bundle.name == "x.v1.0.0"
    assert choice.updates is None


def test_up_to_date_and_downgrades_are_not_updates() -> None:
    top = resolve.Installed(name="x.v1.0.0", version="1.0.0")
    choice = choose(spec(policy=UpgradeConstraintPolicy.SELF_CERTIFIED), top)
    assert choice.updates is not None
    assert choice.updates.available is None
    assert choice.updates.held is None


def test_self_certified_reaches_every_version_in_one_step() -> None:
    choice = choose(spec(AutomaticUpdates.MINOR, policy=UpgradeConstraintPolicy.SELF_CERTIFIED))
    assert choice.resolution is not None
    assert choice.resolution.bundle.name == "x.v0.8.0"
    assert choice.updates is not None
    assert choice.updates.available is not None
    assert choice.updates.available.path == ("x.v1.0.0",)
    assert choice.updates.held is not None
    assert choice.updates.held.bundle.name == "x.v1.0.0"


def test_when_the_catalog_drops_the_installed_bundle_nothing_allowed_is_left() -> None:
    # Only 0.8.0 remains; the policy allows patches: nothing to install, what is installed stays.
    later = content(channels={"stable": chain("x", ["0.8.0"])})
    installed = resolve.Installed(name="x.v0.7.2", version="0.7.2")
    choice = choose(
        spec(AutomaticUpdates.PATCH, policy=UpgradeConstraintPolicy.SELF_CERTIFIED), installed, (later,)
    )
    assert choice.resolution is None
    assert choice.updates is not None
    assert choice.updates.held is not None
    assert choice.updates.held.bundle.name == "x.v0.8.0"
