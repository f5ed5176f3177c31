"""The resolver on real upgrade graphs from the community catalog (skipRange, replaces, skips)."""

from __future__ import annotations

from typing import Any

import pytest

from olm.api.extensionspec import CatalogSource
from olm.pipeline import resolve
from unit.pipeline.resolve.catalogs import COMMUNITY, real


def _resolve(
    package: str, installed: str | None, *, bundle_prefix: str = "", **source: Any
) -> resolve.Resolution:
    prefix = bundle_prefix or package
    current = (
        None if installed is None else resolve.Installed(name=f"{prefix}.v{installed}", version=installed)
    )
    catalogs = [resolve.CatalogContent(name="community", priority=0, content=real(package))]
    return resolve.resolve(CatalogSource.parse({"packageName": package, **source}), current, catalogs)


@pytest.mark.parametrize(
    ("installed", "source", "want"),
    [
        pytest.param(None, {"channels": ["stable"]}, "1.30.3", id="fresh-stable-head"),
        pytest.param(
            None, {}, "1.31.0-nightly-2026-08-22", id="fresh-no-channel-includes-nightly-prereleases"
        ),
        pytest.param(None, {"version": ">=1.0.0"}, "1.30.3", id="fresh-range-excludes-prereleases"),
        pytest.param(None, {"channels": ["stable-1.0"]}, "1.0.0", id="fresh-single-entry-channel"),
        pytest.param("1.25.0", {"channels": ["stable"]}, "1.30.3", id="skiprange-jumps-to-head"),
        pytest.param(
            "1.25.0", {"channels": ["stable"], "version": "1.28.x"}, "1.28.3", id="skiprange-with-x-range"
        ),
        pytest.param("1.26.3", {"channels": ["stable-1.27"]}, "1.27.3", id="skiprange-across-channels"),
        pytest.param("1.30.3", {"channels": ["stable"]}, "1.30.3", id="head-stays-put"),
        pytest.param("1.0.0", {"channels": ["stable"]}, "1.30.3", id="skiprange-from-stable-1.0"),
    ],
)
def test_sailoperator(installed: str | None, source: dict[str, Any], want: str) -> None:
    assert _resolve("sailoperator", installed, **source).bundle.version == want


@pytest.mark.parametrize(
    ("installed", "source", "want"),
    [
        pytest.param("2.1.5", {"channels": ["2.2.x"]}, "2.2.5", id="x-range-skiprange-from-2.1"),
        pytest.param("2.3.0", {"channels": ["stable"]}, "2.3.8", id="skips-to-2.3.8"),
        pytest.param("2.3.8", {"channels": ["stable"]}, "2.4.0", id="replaces-one-step"),
        pytest.param("2.4.17", {"channels": ["stable"]}, "2.4.18", id="replaces-out-of-order-entries"),
        pytest.param("2.4.18", {"channels": ["stable"]}, "2.5.14", id="skiprange-into-2.5"),
        pytest.param("2.5.0", {}, "2.5.14", id="skiprange-any-channel"),
        pytest.param(None, {}, "2.5.14", id="fresh-head"),
        pytest.param(None, {"channels": ["2.4.x"]}, "2.4.18", id="fresh-channel-head"),
    ],
)
def test_infinispan(installed: str | None, source: dict[str, Any], want: str) -> None:
    result = _resolve("infinispan", installed, bundle_prefix="infinispan-operator", **source)
    assert result.bundle.version == want
    assert result.bundle.name == f"infinispan-operator.v{want}"


def test_infinispan_skip_without_edge_refused() -> None:
    with pytest.raises(resolve.NoBundlesFound) as caught:
        _resolve("infinispan", "2.3.8", bundle_prefix="infinispan-operator", version="2.5.14")
    assert str(caught.value) == (
        'error upgrading from currently installed version "2.3.8": '
        'no bundles found for package "infinispan" matching version "2.5.14"'
    )
    assert caught.value.explanation == (
        f"catalogs: community (no successor of 2.3.8 in range, highest successor 2.4.0); "
        f"{resolve.Advice.SUCCESSOR}"
    )


@pytest.mark.parametrize(
    ("installed", "want"),
    [
        pytest.param("0.3.0", "0.3.1", id="linear-first-step"),
        pytest.param("0.5.0", "0.5.1", id="linear-one-step-only"),
        pytest.param("0.7.0", "0.7.1", id="linear-to-head"),
        pytest.param("0.7.1", "0.7.1", id="head-stays-put"),
        pytest.param(None, "0.7.1", id="fresh"),
    ],
)
def test_kube_green(installed: str | None, want: str) -> None:
    assert _resolve("kube-green", installed).bundle.version == want


def test_kube_green_cannot_jump() -> None:
    with pytest.raises(resolve.NoBundlesFound) as caught:
        _resolve("kube-green", "0.5.0", version="0.7.1")
    assert str(caught.value) == (
        'error upgrading from currently installed version "0.5.0": '
        'no bundles found for package "kube-green" matching version "0.7.1"'
    )
    assert caught.value.explanation == (
        f"catalogs: community (no successor of 0.5.0 in range, highest successor 0.5.1); "
        f"{resolve.Advice.SUCCESSOR}"
    )


def test_kube_green_self_certified_can_jump() -> None:
    result = _resolve("kube-green", "0.5.0", version="0.7.1", upgradeConstraintPolicy="SelfCertified")
    assert result.bundle.version == "0.7.1"


@pytest.mark.parametrize(
    ("installed", "source", "want"),
    [
        pytest.param("1.0.0", {}, "1.1.1", id="skips-beat-replaces"),
        pytest.param("1.0.0", {"version": "1.1.0"}, "1.1.0", id="replaces-pinned"),
        pytest.param("1.1.0", {}, "1.1.1", id="skips-from-1.1.0"),
        pytest.param("1.1.1", {}, "1.1.2", id="replaces-to-head"),
        pytest.param(None, {"channels": ["stable"], "version": "~1.1"}, "1.1.2", id="fresh-tilde"),
    ],
)
def test_cat_facts(installed: str | None, source: dict[str, Any], want: str) -> None:
    assert _resolve("cat-facts-operator", installed, **source).bundle.version == want


def test_cat_facts_cannot_skip_to_head() -> None:
    with pytest.raises(resolve.NoBundlesFound, match=r'currently installed version "1\.0\.0"'):
        _resolve("cat-facts-operator", "1.0.0", version="1.1.2")


def test_real_catalog_dependencies_are_refused() -> None:
    """Some packages of the community catalog declare `olm.package.required`/`olm.gvk.required`."""
    if not COMMUNITY.is_dir():
        pytest.skip("real catalog data not found")
    refused: list[str] = []
    for directory in sorted(p for p in COMMUNITY.iterdir() if p.is_dir()):
        content = real(directory.name)
        source = CatalogSource.parse({"packageName": directory.name})
        catalogs = [resolve.CatalogContent(name="community", content=content)]
        try:
            result = resolve.resolve(source, None, catalogs)
        except resolve.UnsupportedDependency as err:
            refused.append(err.property_type)
            continue
        except resolve.NoBundlesFound:
            continue
        chosen = next(b for b in content.bundles if b.name == result.bundle.name)
        assert not {p.type for p in chosen.properties} & set(resolve.UNSUPPORTED_DEPENDENCY_PROPERTIES)
    assert refused
    assert set(refused) <= set(resolve.UNSUPPORTED_DEPENDENCY_PROPERTIES)
