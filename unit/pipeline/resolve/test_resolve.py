"""The resolver on small synthetic catalogs: filters, upgrade edges, deprecation, priority, errors."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import pytest

from olm.api.extensionspec import CatalogSource, UpgradeConstraintPolicy
from olm.pipeline import resolve
from olm.pipeline.catalogs import PackageContent
from olm.pipeline.catalogs.gathering import NOT_SERVING, UNAVAILABLE, UNREACHABLE, Skipped
from unit.pipeline.resolve.catalogs import chain, content

SELF = UpgradeConstraintPolicy.SELF_CERTIFIED

LINEAR = content(channels={"stable": chain("x", ["1.0.0", "1.1.0", "1.2.0"])})
TWO_CHANNELS = content(
    channels={
        "stable": chain("x", ["1.0.0", "1.1.0", "1.2.0"]),
        "fast": chain("x", ["1.0.0", "1.1.0", "1.2.0", "2.0.0"]),
    }
)
SKIPS = content(
    channels={
        "stable": [
            {"name": "x.v1.0.0"},
            {"name": "x.v1.1.0", "replaces": "x.v1.0.0"},
            {"name": "x.v1.2.0", "replaces": "x.v1.1.0", "skips": ["x.v1.0.0"]},
            {"name": "x.v1.3.0", "replaces": "x.v1.2.0"},
        ]
    }
)
SKIP_RANGE = content(
    channels={
        "stable": [
            {"name": "x.v1.0.0"},
            {"name": "x.v1.0.5", "skipRange": ">=1.0.0 <1.0.5"},
            {"name": "x.v1.1.0", "skipRange": ">=1.0.x <1.1.0"},
            {"name": "x.v2.0.0", "replaces": "x.v1.1.0"},
        ]
    }
)
DEPRECATED_HEAD = content(
    channels={"stable": chain("x", ["1.0.0", "1.1.0", "1.2.0"])},
    deprecations=[("olm.bundle", "x.v1.2.0", "x.v1.2.0 is broken; use 1.1.0")],
)
ALL_DEPRECATED = content(
    channels={"stable": chain("x", ["1.0.0", "1.1.0"])},
    deprecations=[
        ("olm.package", "", "x is no longer maintained"),
        ("olm.channel", "stable", "stable is frozen"),
        ("olm.bundle", "x.v1.0.0", "1.0.0 is deprecated"),
        ("olm.bundle", "x.v1.1.0", "1.1.0 is deprecated"),
    ],
)
PRERELEASE = content(channels={"stable": chain("x", ["1.0.0", "1.1.0-rc.1"])})

# The advice sentences, spelled out: a change to them is a change users see.
SUCCESSOR = "request a successor version, or set upgradeConstraintPolicy: SelfCertified to skip the graph"
VERSION = "change spec.source.catalog.version to include an available version"
CHANNEL = "change spec.source.catalog.channels to channels the package has"
SKIPPED = "see why the skipped catalogs give no content (olmctl catalog list)"
PACKAGE = "check the package name (olmctl search) or select a catalog that has it"
SELECTOR = "change spec.source.catalog.selector to match the labels of a ClusterCatalog"
NO_CATALOG = "create a ClusterCatalog that serves the package (olmctl catalog add)"
PRIORITY = "give one catalog a higher spec.priority or narrow spec.source.catalog.selector"


@dataclass(frozen=True)
class Case:
    source: dict[str, Any]
    catalogs: list[tuple[str, int, PackageContent]]
    installed: str | None = None
    want: tuple[str, str] | None = None
    """(bundle name, catalog)"""
    error: str | None = None
    """Upstream's message, then "; " and our explanation: the `Failed` Event's text."""
    skipped: tuple[Skipped, ...] = field(default=())
    not_selected: tuple[str, ...] = field(default=())


def _installed(version: str | None) -> resolve.Installed | None:
    return None if version is None else resolve.Installed(name=f"x.v{version}", version=version)


def _run(case: Case) -> resolve.Resolution:
    source = CatalogSource.parse({"packageName": "x", **case.source})
    catalogs = [resolve.CatalogContent(name=n, priority=p, content=c) for n, p, c in case.catalogs]
    return resolve.resolve(
        source, _installed(case.installed), catalogs, skipped=case.skipped, not_selected=case.not_selected
    )


CASES = [
    pytest.param(Case({}, [("a", 0, LINEAR)], want=("x.v1.2.0", "a")), id="fresh-install-highest-version"),
    pytest.param(Case({"version": "1.1.0"}, [("a", 0, LINEAR)], want=("x.v1.1.0", "a")), id="version-pin"),
    pytest.param(Case({"version": "<1.2.0"}, [("a", 0, LINEAR)], want=("x.v1.1.0", "a")), id="version-range"),
    pytest.param(
        Case({"channels": ["stable"]}, [("a", 0, TWO_CHANNELS)], want=("x.v1.2.0", "a")), id="channel-filter"
    ),
    pytest.param(
        Case({"channels": ["stable", "fast"]}, [("a", 0, TWO_CHANNELS)], want=("x.v2.0.0", "a")),
        id="channels-are-a-union",
    ),
    pytest.param(
        Case(
            {"channels": ["stable"], "version": ">=2.0.0"},
            [("a", 0, TWO_CHANNELS)],
            error=(
                'no bundles found for package "x" matching version ">=2.0.0" in channels [stable]; '
                f"catalogs: a (no version in range, highest 1.2.0); {VERSION}"
            ),
        ),
        id="channel-and-version-are-anded",
    ),
    pytest.param(
        Case({}, [], error=f'no bundles found for package "x"; no ClusterCatalogs exist; {NO_CATALOG}'),
        id="no-catalogs",
    ),
    pytest.param(
        Case(
            {},
            [],
            not_selected=("a", "b"),
            error=(
                'no bundles found for package "x"; no ClusterCatalog matches spec.source.catalog.selector '
                f"(not selected: a, b); {SELECTOR}"
            ),
        ),
        id="selector-matches-no-catalog",
    ),
    pytest.param(
        Case(
            {},
            [],
            not_selected=tuple(f"c{n}" for n in range(8)),
            error=(
                'no bundles found for package "x"; no ClusterCatalog matches spec.source.catalog.selector '
                f"(not selected: c0, c1, c2, c3, c4 and 3 more); {SELECTOR}"
            ),
        ),
        id="many-not-selected-are-counted",
    ),
    pytest.param(
        Case(
            {},
            [("a", 0, PackageContent(name="x"))],
            error=f'no bundles found for package "x"; catalogs: a (package absent); {PACKAGE}',
        ),
        id="package-not-in-catalog",
    ),
    pytest.param(
        Case(
            {"channels": ["beta", "alpha"]},
            [("a", 0, LINEAR)],
            error=(
                'no bundles found for package "x" in channels [beta alpha]; '
                f"catalogs: a (no bundle in channels [beta alpha], has [stable]); {CHANNEL}"
            ),
        ),
        id="unknown-channel",
    ),
    pytest.param(
        Case(
            {"channels": ["beta"]},
            [("a", 0, content(channels={f"c{n}": chain("x", ["1.0.0"]) for n in range(7)}))],
            error=(
                'no bundles found for package "x" in channels [beta]; '
                f"catalogs: a (no bundle in channels [beta], has [c0 c1 c2 c3 c4 ...]); {CHANNEL}"
            ),
        ),
        id="many-channels-are-cut",
    ),
    pytest.param(
        Case(
            {"version": "9.0.0"},
            [("a", 0, LINEAR)],
            error=(
                'no bundles found for package "x" matching version "9.0.0"; '
                f"catalogs: a (no version in range, highest 1.2.0); {VERSION}"
            ),
        ),
        id="no-version-match",
    ),
    pytest.param(
        Case({}, [("a", 0, PRERELEASE)], want=("x.v1.1.0-rc.1", "a")), id="no-range-allows-prerelease"
    ),
    pytest.param(
        Case({"version": ">=1.0.0"}, [("a", 0, PRERELEASE)], want=("x.v1.0.0", "a")),
        id="range-without-prerelease-excludes-prerelease",
    ),
    pytest.param(
        Case({}, [("a", 0, LINEAR)], installed="1.0.0", want=("x.v1.1.0", "a")),
        id="upgrade-replaces-one-step",
    ),
    pytest.param(
        Case({}, [("a", 0, LINEAR)], installed="1.2.0", want=("x.v1.2.0", "a")), id="upgrade-stay-put-at-head"
    ),
    pytest.param(Case({}, [("a", 0, SKIPS)], installed="1.0.0", want=("x.v1.2.0", "a")), id="upgrade-skips"),
    pytest.param(
        Case({}, [("a", 0, SKIP_RANGE)], installed="1.0.0", want=("x.v1.1.0", "a")),
        id="upgrade-skiprange-x-range",
    ),
    pytest.param(
        Case({}, [("a", 0, SKIP_RANGE)], installed="1.0.5", want=("x.v1.1.0", "a")),
        id="upgrade-skiprange-from-middle",
    ),
    pytest.param(
        Case(
            {"version": "1.2.0"},
            [("a", 0, LINEAR)],
            installed="1.0.0",
            error=(
                'error upgrading from currently installed version "1.0.0": '
                'no bundles found for package "x" matching version "1.2.0"; '
                f"catalogs: a (no successor of 1.0.0 in range, highest successor 1.1.0); {SUCCESSOR}"
            ),
        ),
        id="upgrade-non-successor-refused",
    ),
    pytest.param(
        Case(
            {"version": "1.0.0"},
            [("a", 0, LINEAR)],
            installed="1.1.0",
            error=(
                'error upgrading from currently installed version "1.1.0": '
                'no bundles found for package "x" matching version "1.0.0"; '
                f"catalogs: a (no successor of 1.1.0 in range, highest successor 1.2.0); {SUCCESSOR}"
            ),
        ),
        id="downgrade-refused",
    ),
    pytest.param(
        Case(
            {"version": "1.2.0", "upgradeConstraintPolicy": SELF},
            [("a", 0, LINEAR)],
            installed="1.0.0",
            want=("x.v1.2.0", "a"),
        ),
        id="self-certified-jump",
    ),
    pytest.param(
        Case(
            {"version": "1.0.0", "upgradeConstraintPolicy": SELF},
            [("a", 0, LINEAR)],
            installed="1.2.0",
            want=("x.v1.0.0", "a"),
        ),
        id="self-certified-downgrade",
    ),
    pytest.param(
        Case({"channels": ["stable"]}, [("a", 0, TWO_CHANNELS)], installed="1.2.0", want=("x.v1.2.0", "a")),
        id="upgrade-edges-only-from-considered-channels",
    ),
    pytest.param(Case({}, [("a", 0, DEPRECATED_HEAD)], want=("x.v1.1.0", "a")), id="deprecated-bundle-last"),
    pytest.param(
        Case({"version": "1.2.0"}, [("a", 0, DEPRECATED_HEAD)], want=("x.v1.2.0", "a")),
        id="deprecated-bundle-chosen-when-only-match",
    ),
    pytest.param(
        Case({}, [("low", 0, LINEAR), ("high", 10, LINEAR)], want=("x.v1.2.0", "high")),
        id="priority-breaks-tie",
    ),
    pytest.param(
        Case({}, [("neg", -5, LINEAR), ("zero", 0, LINEAR)], want=("x.v1.2.0", "zero")),
        id="negative-priority-loses",
    ),
    pytest.param(
        Case(
            {},
            [("b", 0, LINEAR), ("a", 0, LINEAR)],
            error=(
                f'found bundles for package "x" in multiple catalogs with the same priority [a b]; {PRIORITY}'
            ),
        ),
        id="equal-priority-ambiguous",
    ),
    pytest.param(
        Case(
            {},
            [("b", 0, LINEAR), ("a", 0, LINEAR), ("c", 0, PackageContent(name="x"))],
            error=(
                f'found bundles for package "x" in multiple catalogs with the same priority [a b]; {PRIORITY}'
            ),
        ),
        id="catalog-without-package-is-not-ambiguous",
    ),
    pytest.param(
        Case(
            {},
            [("deprecated-high", 10, ALL_DEPRECATED), ("plain-low", 0, LINEAR)],
            want=("x.v1.2.0", "plain-low"),
        ),
        id="non-deprecated-beats-priority",
    ),
    pytest.param(
        Case(
            {},
            [("deprecated-high", 10, DEPRECATED_HEAD), ("plain-low", 0, LINEAR)],
            want=("x.v1.1.0", "deprecated-high"),
        ),
        id="priority-among-non-deprecated",
    ),
    pytest.param(
        Case(
            {"version": "5.0.0"},
            [("a", 0, LINEAR)],
            skipped=(Skipped(name="gone", why=NOT_SERVING), Skipped(name="down", why=UNREACHABLE)),
            not_selected=("other",),
            error=(
                'no bundles found for package "x" matching version "5.0.0"; '
                "catalogs: a (no version in range, highest 1.2.0), down (unreachable), gone (not serving); "
                f"1 not selected by spec.source.catalog.selector; {VERSION}"
            ),
        ),
        id="skipped-catalogs-named-with-their-reason",
    ),
    pytest.param(
        Case(
            {},
            [("a", 0, PackageContent(name="x"))],
            skipped=(Skipped(name="off", why=UNAVAILABLE),),
            error=(
                'no bundles found for package "x"; '
                f"catalogs: a (package absent), off (availabilityMode: Unavailable); {SKIPPED}"
            ),
        ),
        id="a-skipped-catalog-may-hold-the-package",
    ),
    pytest.param(
        Case(
            {},
            [(f"c{n}", 0, PackageContent(name="x")) for n in range(7)],
            error=(
                'no bundles found for package "x"; catalogs: c0 (package absent), c1 (package absent), '
                "c2 (package absent), c3 (package absent), c4 (package absent) and 2 more; "
                f"{PACKAGE}"
            ),
        ),
        id="many-catalogs-are-counted",
    ),
    pytest.param(
        Case(
            {"version": "1.2.0"},
            [("a", 0, PackageContent(name="x")), ("b", 0, LINEAR)],
            installed="1.0.0",
            error=(
                'error upgrading from currently installed version "1.0.0": '
                'no bundles found for package "x" matching version "1.2.0"; '
                f"catalogs: a (package absent), b (no successor of 1.0.0 in range, highest successor 1.1.0); "
                f"{SUCCESSOR}"
            ),
        ),
        id="advice-from-the-catalog-with-the-package",
    ),
    pytest.param(
        Case(
            {},
            [("a", 0, content(channels={"stable": [{"name": "x.v1.2.0"}]}))],
            installed="1.0.0",
            error=(
                'error upgrading from currently installed version "1.0.0": no bundles found for package "x"; '
                f"catalogs: a (no successor of 1.0.0); {SUCCESSOR}"
            ),
        ),
        id="installed-bundle-gone-and-no-successor",
    ),
]


@pytest.mark.parametrize("case", CASES)
def test_resolve(case: Case) -> None:
    if case.error is not None:
        with pytest.raises(resolve.ResolutionError) as caught:
            _run(case)
        # The condition carries upstream's sentence alone; the explanation goes beside it.
        message, _, explanation = case.error.partition("; ")
        assert str(caught.value) == message
        assert caught.value.explanation == explanation
        return
    result = _run(case)
    assert (result.bundle.name, result.bundle.catalog) == case.want
    assert result.bundle.package == "x"
    assert result.bundle.version == case.want[0].partition(".v")[2]
    assert result.bundle.image.startswith("registry.example/x@")


def test_ambiguity_error_names_the_tied_catalogs() -> None:
    with pytest.raises(resolve.AmbiguousCatalogs) as caught:
        _run(Case({}, [("b", 3, LINEAR), ("a", 3, LINEAR), ("c", 1, LINEAR)]))
    assert caught.value.catalogs == ("a", "b")


def test_result_is_independent_of_catalog_order() -> None:
    catalogs = [("a", 1, LINEAR), ("b", 2, DEPRECATED_HEAD), ("c", 0, TWO_CHANNELS)]
    first = _run(Case({}, catalogs))
    assert _run(Case({}, list(reversed(catalogs)))) == first


def test_missing_catalog_never_yields_a_non_successor() -> None:
    # The catalog holding the successor path is down; the other one has only a jump target.
    jump_only = content(channels={"stable": [{"name": "x.v1.2.0"}]})
    with pytest.raises(resolve.NoBundlesFound) as caught:
        _run(
            Case(
                {},
                [("other", 0, jump_only)],
                installed="1.0.0",
                skipped=(Skipped(name="home", why=NOT_SERVING),),
            )
        )
    assert "home (not serving)" in caught.value.explanation


def test_entries_naming_absent_bundles_are_ignored() -> None:
    # Served as upstream's catalogd serves it; an entry without its bundle offers nothing to install.
    ghost = content(
        channels={"stable": [*chain("x", ["1.0.0"]), {"name": "x.v2.0.0", "replaces": "x.v1.0.0"}]}
    )
    only_real = dataclasses.replace(ghost, bundles=tuple(b for b in ghost.bundles if b.name != "x.v2.0.0"))
    assert _run(Case({}, [("c", 0, only_real)])).bundle.name == "x.v1.0.0"
    assert _run(Case({}, [("c", 0, only_real)], installed="1.0.0")).bundle.name == "x.v1.0.0"


def test_a_bundle_in_no_channel_is_a_candidate_only_without_a_channel_filter() -> None:
    # As upstream: without spec.source.catalog.channels every bundle of the package is considered.
    orphaned = content(channels={"stable": chain("x", ["1.0.0"])}, versions={"x.v2.0.0": "2.0.0"})
    assert _run(Case({}, [("c", 0, orphaned)])).bundle.name == "x.v2.0.0"
    assert _run(Case({"channels": ["stable"]}, [("c", 0, orphaned)])).bundle.name == "x.v1.0.0"


@pytest.mark.parametrize(
    "version",
    [
        pytest.param("v2.0.0", id="leading-v"),
        pytest.param("2.0", id="two-parts"),
        pytest.param("", id="empty"),
    ],
)
def test_a_bundle_without_a_semantic_version_is_skipped(version: str) -> None:
    unversioned = content(channels={"stable": chain("x", ["1.0.0", "2.0.0"])}, versions={"x.v2.0.0": version})
    if version == "":  # no version at all: the olm.package property is dropped
        unversioned = dataclasses.replace(
            unversioned,
            bundles=tuple(
                dataclasses.replace(b, properties=()) if b.name == "x.v2.0.0" else b
                for b in unversioned.bundles
            ),
        )
    assert _run(Case({}, [("c", 0, unversioned)])).bundle.name == "x.v1.0.0"


def test_the_first_olm_package_property_gives_the_version() -> None:
    # Upstream's resolver reads the first olm.package property and ignores any other.
    second = {"type": "olm.package", "value": {"packageName": "x", "version": "9.0.0"}}
    doubled = content(channels={"stable": chain("x", ["1.0.0", "1.1.0"])}, properties={"x.v1.0.0": [second]})
    resolution = _run(Case({}, [("c", 0, doubled)]))
    assert (resolution.bundle.name, resolution.bundle.version) == ("x.v1.1.0", "1.1.0")


def test_a_package_without_a_default_channel_resolves_over_every_channel() -> None:
    # Upstream serves such a package and never reads defaultChannel; neither does resolution here.
    two = content(channels={"stable": chain("x", ["1.0.0", "1.1.0"]), "fast": chain("x", ["1.2.0"])})
    assert two.package is not None
    headless = dataclasses.replace(two, package=dataclasses.replace(two.package, default_channel=""))
    assert _run(Case({}, [("c", 0, headless)])).bundle.version == "1.2.0"
    assert _run(Case({"channels": ["stable"]}, [("c", 0, headless)])).bundle.version == "1.1.0"


@pytest.mark.parametrize(
    "property_type",
    [
        pytest.param("olm.package.required", id="package-required"),
        pytest.param("olm.gvk.required", id="gvk-required"),
        pytest.param("olm.constraint", id="constraint"),
    ],
)
def test_dependency_properties_are_refused(property_type: str) -> None:
    catalog = content(
        channels={"stable": chain("x", ["1.0.0"])},
        properties={"x.v1.0.0": [{"type": property_type, "value": {}}]},
    )
    with pytest.raises(resolve.UnsupportedDependency) as caught:
        _run(Case({}, [("a", 0, catalog)]))
    assert str(caught.value) == (
        f'validating bundle "x.v1.0.0": bundle "x.v1.0.0" has a dependency declared via property '
        f'"{property_type}" which is currently not supported'
    )


def test_deprecation_notices_for_the_chosen_bundle() -> None:
    result = _run(Case({"channels": ["stable"]}, [("a", 0, ALL_DEPRECATED)]))
    assert result.bundle.name == "x.v1.1.0"
    assert result.deprecation == resolve.Deprecation(
        package="x is no longer maintained",
        channels=(("stable", "stable is frozen"),),
        bundle="1.1.0 is deprecated",
    )
    assert result.deprecation.deprecated


def test_no_deprecation_notices() -> None:
    result = _run(Case({}, [("a", 0, LINEAR)]))
    assert not result.deprecation.deprecated


def test_invalid_version_range() -> None:
    with pytest.raises(resolve.InvalidVersionRange, match='invalid version range "not-a-range"'):
        _run(Case({"version": "not-a-range"}, [("a", 0, LINEAR)]))


def test_skipped_catalogs_are_reported_on_success() -> None:
    z, b = Skipped(name="z", why=NOT_SERVING), Skipped(name="b", why=UNREACHABLE)
    result = _run(Case({}, [("a", 0, LINEAR)], skipped=(z, b)))
    assert result.skipped == (b, z)


@pytest.mark.parametrize("advice", list(resolve.Advice))
def test_advice_is_found_again_in_the_message(advice: resolve.Advice) -> None:
    assert resolve.advice_in(f'no bundles found for package "x"; catalogs: a (why); {advice}') is advice


def test_no_advice_in_other_messages() -> None:
    assert resolve.advice_in('service account "a" not found in namespace "b"') is None
