"""`olm.cli.packages.upgradepath`: direct successors decided as the resolver decides them, chains found by
breadth-first search, everything else needing SelfCertified."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from olm.cli.packages.upgradepath import Verdict, upgrade_path
from olm.pipeline.catalogs import PackageContent, parse_lines
from olm.pipeline.resolve import Installed

PACKAGE = "demo"


def _bundle(version: str) -> dict[str, Any]:
    return {
        "schema": "olm.bundle",
        "name": f"{PACKAGE}.v{version}",
        "package": PACKAGE,
        "image": f"registry.example/demo:v{version}",
        "properties": [{"type": "olm.package", "value": {"packageName": PACKAGE, "version": version}}],
    }


def _content() -> PackageContent:
    """stable: 1.0.0 <- 1.1.0 (replaces) <- 1.2.0 (replaces); 2.0.0 skips 1.2.0; fast: 3.0.0 with
    skipRange <3.0.0."""
    metas = [
        {"schema": "olm.package", "name": PACKAGE, "defaultChannel": "stable"},
        *(_bundle(v) for v in ("1.0.0", "1.1.0", "1.2.0", "2.0.0", "3.0.0")),
        {
            "schema": "olm.channel",
            "name": "stable",
            "package": PACKAGE,
            "entries": [
                {"name": "demo.v1.0.0"},
                {"name": "demo.v1.1.0", "replaces": "demo.v1.0.0"},
                {"name": "demo.v1.2.0", "replaces": "demo.v1.1.0"},
                {"name": "demo.v2.0.0", "skips": ["demo.v1.2.0"]},
            ],
        },
        {
            "schema": "olm.channel",
            "name": "fast",
            "package": PACKAGE,
            "entries": [{"name": "demo.v3.0.0", "skipRange": "<3.0.0"}],
        },
    ]
    return parse_lines("cat", PACKAGE, [orjson.dumps(m) for m in metas])


def _path(installed: str, target: str, channels: tuple[str, ...] = ()) -> Any:
    return upgrade_path(
        _content(),
        "cat",
        Installed(name=f"demo.v{installed}", version=installed),
        target=f"demo.v{target}",
        target_version=target,
        channels=channels,
    )


@pytest.mark.parametrize(
    ("installed", "target", "kind", "channel"),
    [
        ("1.0.0", "1.1.0", "replaces", "stable"),
        ("1.2.0", "2.0.0", "skips", "stable"),
        ("1.0.0", "3.0.0", "skipRange", "fast"),
    ],
)
def test_a_direct_successor_names_its_edge(installed: str, target: str, kind: str, channel: str) -> None:
    path = _path(installed, target)
    assert path.verdict is Verdict.DIRECT
    assert not path.needs_self_certified
    assert [(s.kind, s.channel) for s in path.steps] == [(kind, channel)]
    assert path.explain().startswith("Direct successor: ")


def test_a_skip_range_step_carries_its_range() -> None:
    step = _path("1.1.0", "3.0.0").steps[0]
    assert step.skip_range == "<3.0.0"
    assert "skipRange '<3.0.0'" in step.describe()


def test_the_shortest_chain_is_found_when_the_target_is_not_a_direct_successor() -> None:
    path = _path("1.0.0", "2.0.0", ("stable",))
    assert path.verdict is Verdict.CHAIN
    assert path.needs_self_certified
    assert [s.target for s in path.steps] == ["demo.v1.1.0", "demo.v1.2.0", "demo.v2.0.0"]
    assert "3 upgrades (demo.v1.0.0 -> demo.v1.1.0 -> demo.v1.2.0 -> demo.v2.0.0)" in path.explain()


def test_channels_limit_the_edges_considered() -> None:
    # 3.0.0 covers 1.0.0 only through channel fast.
    path = _path("1.0.0", "3.0.0", ("stable",))
    assert path.verdict is Verdict.NO_PATH
    assert "channels [stable]" in path.explain(("stable",))


def test_a_downgrade_has_no_path_and_says_so() -> None:
    path = _path("1.2.0", "1.0.0")
    assert path.verdict is Verdict.NO_PATH
    assert path.downgrade
    assert "a downgrade" in path.explain()
    assert "SelfCertified" in path.explain()


def test_the_installed_bundle_is_no_upgrade() -> None:
    path = _path("1.1.0", "1.1.0")
    assert path.verdict is Verdict.INSTALLED
    assert not path.needs_self_certified


def test_as_data() -> None:
    data = _path("1.0.0", "3.0.0").to_dict()
    assert data["verdict"] == "DirectSuccessor"
    assert data["steps"] == [
        {
            "from": "demo.v1.0.0",
            "to": "demo.v3.0.0",
            "kind": "skipRange",
            "channel": "fast",
            "skipRange": "<3.0.0",
        }
    ]
