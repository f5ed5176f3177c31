"""Properties of the resolver over generated catalogs."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from olm import semver
from olm.api.extensionspec import CatalogSource
from olm.pipeline import resolve
from unit.pipeline.resolve.catalogs import content

VERSIONS = [f"{major}.{minor}.{patch}" for major in (0, 1, 2) for minor in (0, 1, 3) for patch in (0, 2)]
RANGES = ["", ">=1.0.0", "<1.3.0", "1.x", "~1.1", "^0.1", ">=0.3.0, <2.1.0", "1.0.0 || 2.x", "!=1.1.0"]
CHANNELS = ["stable", "fast", "candidate"]


@st.composite
def catalogs(draw: st.DrawFn) -> tuple[Any, list[str], dict[str, list[dict[str, Any]]]]:
    chosen = sorted(
        set(draw(st.lists(st.sampled_from(VERSIONS), min_size=1, max_size=10))), key=semver.parse_version
    )
    channels: dict[str, list[dict[str, Any]]] = {}
    for channel in draw(st.lists(st.sampled_from(CHANNELS), min_size=1, max_size=3, unique=True)):
        members = [v for v in chosen if draw(st.booleans())] or chosen[:1]
        entries = []
        for index, version in enumerate(members):
            entry: dict[str, Any] = {"name": f"x.v{version}"}
            if index and draw(st.booleans()):
                entry["replaces"] = f"x.v{members[index - 1]}"
            if index > 1 and draw(st.booleans()):
                entry["skips"] = [f"x.v{members[0]}"]
            if draw(st.integers(0, 4)) == 0:
                entry["skipRange"] = f"<{version}"
            entries.append(entry)
        channels[channel] = entries
    deprecated = [("olm.bundle", f"x.v{v}", "old") for v in chosen if draw(st.integers(0, 5)) == 0]
    return content(channels=channels, deprecations=deprecated), chosen, channels


def _edges(channels: dict[str, list[dict[str, Any]]], wanted: list[str]) -> set[tuple[str, str]]:
    return {
        (entry["name"], source)
        for name, entries in channels.items()
        if not wanted or name in wanted
        for entry in entries
        for source in [entry.get("replaces", ""), *entry.get("skips", [])]
    }


@settings(max_examples=200, deadline=None)
@given(
    catalog=catalogs(),
    version_range=st.sampled_from(RANGES),
    wanted=st.lists(st.sampled_from(CHANNELS), max_size=2, unique=True),
    installed_index=st.none() | st.integers(0, 9),
)
def test_result_satisfies_range_channels_and_edges(
    catalog: tuple[Any, list[str], dict[str, list[dict[str, Any]]]],
    version_range: str,
    wanted: list[str],
    installed_index: int | None,
) -> None:
    package, versions, channels = catalog
    installed = None
    if installed_index is not None:
        version = versions[installed_index % len(versions)]
        installed = resolve.Installed(name=f"x.v{version}", version=version)
    source = CatalogSource.parse(
        {"packageName": "x", "version": version_range or None, "channels": wanted or None}
    )
    try:
        result = resolve.resolve(source, installed, [resolve.CatalogContent(name="c", content=package)])
    except resolve.NoBundlesFound:
        return
    chosen = semver.parse_version(result.bundle.version)
    if version_range:
        assert semver.parse_range(version_range).matches(chosen)
    if wanted:
        assert any(result.bundle.name == e["name"] for c in wanted for e in channels.get(c, []))
    if installed is not None and result.bundle.name != installed.name:
        ranged = any(
            e["name"] == result.bundle.name
            and e.get("skipRange")
            and semver.parse_skip_range(e["skipRange"]).matches(semver.parse_version(installed.version))
            for c, entries in channels.items()
            if not wanted or c in wanted
            for e in entries
        )
        assert ranged or (result.bundle.name, installed.name) in _edges(channels, wanted)


@settings(max_examples=100, deadline=None)
@given(catalog=catalogs(), version_range=st.sampled_from(RANGES))
def test_fresh_install_picks_the_highest_acceptable_non_deprecated_version(
    catalog: tuple[Any, list[str], dict[str, list[dict[str, Any]]]], version_range: str
) -> None:
    package, _, _ = catalog
    source = CatalogSource.parse({"packageName": "x", "version": version_range or None})
    acceptable = [
        b
        for b in package.bundles
        if not version_range
        or semver.parse_range(version_range).matches(semver.parse_version(str(b.version)))
    ]
    try:
        result = resolve.resolve(source, None, [resolve.CatalogContent(name="c", content=package)])
    except resolve.NoBundlesFound:
        assert not acceptable
        return
    deprecated = {e.reference.name for e in package.deprecations.entries} if package.deprecations else set()
    pool = [b for b in acceptable if b.name not in deprecated] or acceptable
    assert semver.parse_version(result.bundle.version) == max(
        semver.parse_version(str(b.version)) for b in pool
    )


@settings(max_examples=50, deadline=None)
@given(catalog=catalogs(), priorities=st.lists(st.integers(-2, 2), min_size=2, max_size=4))
def test_catalog_order_does_not_matter(
    catalog: tuple[Any, list[str], dict[str, list[dict[str, Any]]]], priorities: list[int]
) -> None:
    package, _, _ = catalog
    source = CatalogSource.parse({"packageName": "x"})
    catalogs = [
        resolve.CatalogContent(name=f"c{i}", priority=p, content=package) for i, p in enumerate(priorities)
    ]

    def outcome(order: list[resolve.CatalogContent]) -> object:
        try:
            return resolve.resolve(source, None, order)
        except resolve.ResolutionError as err:
            return str(err)

    assert outcome(catalogs) == outcome(list(reversed(catalogs)))
