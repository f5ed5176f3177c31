"""registries.conf parsing and source selection: the cases of containers-registries.conf(5)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from olm import oci
from olm.oci._mirrors import Source, try_in_order
from olm_testkit.kubeletvolume import project

DIGEST = "sha256:" + "a" * 64


def _sources(conf: str, image: str) -> list[tuple[str, str | None]]:
    """Each source's reference and the prefix of the entry that blocks it."""
    found = oci.parse_registries_conf(conf).sources(oci.Reference.parse(image))
    return [(str(s.reference), s.blocked_by) for s in found]


def test_no_entry_means_the_image_itself() -> None:
    assert _sources("", "example.test/a/b:1") == [("example.test/a/b:1", None)]


def test_mirrors_are_tried_in_order_then_the_primary() -> None:
    conf = """
[[registry]]
location = "mirrored.example:5000"
[[registry.mirror]]
location = "m1.example:5000/cache"
[[registry.mirror]]
location = "m2.example"
"""
    assert _sources(conf, f"mirrored.example:5000/ns/img@{DIGEST}") == [
        (f"m1.example:5000/cache/ns/img@{DIGEST}", None),
        (f"m2.example/ns/img@{DIGEST}", None),
        (f"mirrored.example:5000/ns/img@{DIGEST}", None),
    ]


def test_prefix_rewrites_to_a_location_with_a_path() -> None:
    conf = """
[[registry]]
prefix = "example.test/foo"
location = "internal.example/bar/baz"
"""
    assert _sources(conf, "example.test/foo/img:v1") == [("internal.example/bar/baz/img:v1", None)]
    # A prefix matches whole path components only.
    assert _sources(conf, "example.test/foobar/img:v1") == [("example.test/foobar/img:v1", None)]


def test_the_longest_prefix_wins() -> None:
    conf = """
[[registry]]
prefix = "example.test"
location = "short.example"
[[registry]]
prefix = "example.test/team"
location = "long.example/t"
"""
    assert _sources(conf, "example.test/team/img:1") == [("long.example/t/img:1", None)]
    assert _sources(conf, "example.test/other/img:1") == [("short.example/other/img:1", None)]


def test_a_repeated_prefix_keeps_the_first_entry() -> None:
    conf = """
[[registry]]
prefix = "example.test"
location = "first.example"
[[registry]]
prefix = "example.test"
location = "second.example"
"""
    assert _sources(conf, "example.test/img:1") == [("first.example/img:1", None)]


@pytest.mark.parametrize(
    ("image", "expected"),
    [
        pytest.param("a.example.test/img:1", "mirror.example/img:1", id="subdomain"),
        pytest.param("a.b.example.test:5000/x/img:1", "mirror.example:5000/x/img:1", id="deeper-with-port"),
        pytest.param("example.test/img:1", "example.test/img:1", id="the-domain-itself-is-not-a-subdomain"),
        pytest.param("aexample.test/img:1", "aexample.test/img:1", id="not-a-label-boundary"),
    ],
)
def test_wildcard_prefixes_match_subdomains(image: str, expected: str) -> None:
    conf = """
[[registry]]
prefix = "*.example.test"
location = "mirror.example"
"""
    # Like containers/image, what follows the matched host (a port included) is kept.
    assert [s[0] for s in _sources(conf, image)] == [expected]


def test_a_wildcard_prefix_without_location_keeps_the_host_and_adds_mirrors() -> None:
    conf = """
[[registry]]
prefix = "*.example.test"
[[registry.mirror]]
location = "mirror.example/all"
"""
    assert _sources(conf, "a.example.test/img:1") == [
        ("mirror.example/all/img:1", None),
        ("a.example.test/img:1", None),
    ]


@pytest.mark.parametrize(
    ("by_digest", "image", "expected"),
    [
        pytest.param(True, f"src.example/img@{DIGEST}", ["m.example", "src.example"], id="digest-pull"),
        pytest.param(True, "src.example/img:1", ["src.example"], id="tag-pull-skips-mirrors"),
        pytest.param(False, "src.example/img:1", ["m.example", "src.example"], id="off-tag-pull"),
    ],
)
def test_mirror_by_digest_only(by_digest: bool, image: str, expected: list[str]) -> None:
    conf = f"""
[[registry]]
location = "src.example"
mirror-by-digest-only = {str(by_digest).lower()}
[[registry.mirror]]
location = "m.example"
"""
    assert [oci.Reference.parse(s[0]).registry for s in _sources(conf, image)] == expected


@pytest.mark.parametrize(
    ("image", "expected"),
    [
        pytest.param(
            f"src.example/img@{DIGEST}", ["all.example", "digest.example", "src.example"], id="digest"
        ),
        pytest.param("src.example/img:1", ["all.example", "tag.example", "src.example"], id="tag"),
    ],
)
def test_pull_from_mirror(image: str, expected: list[str]) -> None:
    conf = """
[[registry]]
location = "src.example"
[[registry.mirror]]
location = "all.example"
pull-from-mirror = "all"
[[registry.mirror]]
location = "digest.example"
pull-from-mirror = "digest-only"
[[registry.mirror]]
location = "tag.example"
pull-from-mirror = "tag-only"
"""
    assert [oci.Reference.parse(s[0]).registry for s in _sources(conf, image)] == expected


def test_blocked_sources_are_marked_with_the_rule_that_blocks_them() -> None:
    conf = """
[[registry]]
location = "src.example"
blocked = true
[[registry.mirror]]
location = "m.example"
[[registry]]
location = "m.example"
blocked = true
[[registry]]
prefix = "other.example"
location = "m.example/other"
"""
    assert _sources(conf, f"src.example/img@{DIGEST}") == [
        (f"m.example/img@{DIGEST}", "m.example"),
        (f"src.example/img@{DIGEST}", "src.example"),
    ]
    # Rewritten into a blocked location: blocked too, as containers/image checks the host contacted.
    assert _sources(conf, "other.example/img:1") == [("m.example/other/img:1", "m.example")]


def test_docker_hub_references_match_docker_io() -> None:
    conf = """
[[registry]]
prefix = "docker.io"
location = "docker.io"
[[registry.mirror]]
location = "hub-mirror.example/hub"
"""
    assert [s[0] for s in _sources(conf, "busybox")] == [
        "hub-mirror.example/hub/library/busybox:latest",
        "docker.io/library/busybox:latest",
    ]


def test_v1_blocked_registries_become_blocked_entries() -> None:
    conf = """
[registries.search]
registries = ["search.example"]
[registries.block]
registries = ["blocked.example"]
"""
    assert _sources(conf, "blocked.example/img:1") == [("blocked.example/img:1", "blocked.example")]
    assert _sources(conf, "search.example/img:1") == [("search.example/img:1", None)]


@pytest.mark.parametrize(
    ("conf", "message"),
    [
        pytest.param("[[registry]\n", "is not valid TOML", id="toml"),
        pytest.param("[[registry]]\nblocked = true\n", "both location and prefix are unset", id="empty"),
        pytest.param(
            '[[registry]]\nprefix = "example.test"\n', "location is unset and prefix", id="prefix-only"
        ),
        pytest.param(
            '[[registry]]\nlocation = "https://example.test"\n', "URI schemes are not supported", id="scheme"
        ),
        pytest.param(
            '[[registry]]\nprefix = "*.example.test/x"\n', "must be of the form *.example.com", id="wildcard"
        ),
        pytest.param(
            '[[registry]]\nlocation = "a.example"\n[[registry.mirror]]\nlocation = "m.example"\n'
            'pull-from-mirror = "sometimes"\n',
            "pull-from-mirror 'sometimes' is not one of",
            id="pull-from-mirror",
        ),
        pytest.param(
            '[[registry]]\nlocation = "a.example"\nmirror-by-digest-only = true\n'
            '[[registry.mirror]]\nlocation = "m.example"\npull-from-mirror = "all"\n',
            "cannot be set when the registry sets mirror-by-digest-only",
            id="both-digest-settings",
        ),
        pytest.param(
            '[[registry]]\nlocation = "a.example"\npull-from-mirror = "all"\n',
            "must not be set for a non-mirror registry",
            id="pull-from-mirror-on-registry",
        ),
        pytest.param(
            '[[registry]]\nlocation = "a.example"\n[[registry.mirror]]\ninsecure = true\n',
            "mirror #1: location is unset",
            id="mirror-without-location",
        ),
        pytest.param(
            '[[registry]]\nlocation = "a.example"\nblocked = "yes"\n', "blocked must be true", id="bool"
        ),
        pytest.param(
            '[[registry]]\nprefix = "x.example"\nlocation = "a.example"\nblocked = true\n'
            '[[registry]]\nprefix = "y.example"\nlocation = "a.example"\n',
            "conflicting 'blocked'",
            id="conflict",
        ),
        pytest.param(
            '[registries.block]\nregistries = ["a.example"]\n[[registry]]\nlocation = "b.example"\n',
            "mixing the v1 and v2 formats",
            id="v1-and-v2",
        ),
    ],
)
def test_invalid_files_are_refused_with_the_reason(conf: str, message: str) -> None:
    with pytest.raises(oci.InvalidRegistriesConf, match=message.replace("*", r"\*").replace("(", r"\(")):
        oci.parse_registries_conf(conf, "/etc/containers/registries.conf")


def test_a_rewrite_to_an_invalid_reference_is_a_configuration_error() -> None:
    conf = '[[registry]]\nprefix = "example.test"\nlocation = "UPPER.example/Bad"\n'
    with pytest.raises(oci.InvalidRegistriesConf, match="gives an invalid reference"):
        oci.parse_registries_conf(conf).sources(oci.Reference.parse("example.test/img:1"))


# --- trying sources ----------------------------------------------------------------------------


async def test_the_first_source_that_answers_wins() -> None:
    tried: list[str] = []

    async def attempt(reference: oci.Reference) -> str:
        tried.append(reference.registry)
        if reference.registry == "m1.example":
            raise oci.TransientError(f"fetching manifest {reference}: Connection refused")
        return reference.registry

    sources = oci.parse_registries_conf(
        '[[registry]]\nlocation = "src.example"\n[[registry.mirror]]\nlocation = "m1.example"\n'
        '[[registry.mirror]]\nlocation = "m2.example"\n'
    ).sources(oci.Reference.parse("src.example/img:1"))
    assert await try_in_order(sources, "registries.conf", "resolving", attempt) == "m2.example"
    assert tried == ["m1.example", "m2.example"]


async def test_when_every_source_fails_each_is_named_and_the_last_decides_the_type() -> None:
    async def attempt(reference: oci.Reference) -> str:
        if reference.registry == "m1.example":
            raise oci.TransientError(f"fetching manifest {reference}: Connection refused")
        raise oci.NotFound(f"fetching manifest {reference}: not found")

    sources = oci.parse_registries_conf(
        '[[registry]]\nlocation = "src.example"\n[[registry.mirror]]\nlocation = "m1.example"\n'
    ).sources(oci.Reference.parse("src.example/img:1"))
    with pytest.raises(oci.NotFound) as raised:
        await try_in_order(sources, "/etc/containers/registries.conf", "fetching manifest", attempt)
    assert str(raised.value) == (
        "every source failed (mirrors of /etc/containers/registries.conf): "
        "[1] fetching manifest m1.example/img:1: Connection refused; "
        "[2] fetching manifest src.example/img:1: not found"
    )


async def test_a_blocked_source_is_refused_without_a_request() -> None:
    async def attempt(reference: oci.Reference) -> str:
        raise AssertionError(f"{reference} was contacted")

    source = Source(oci.Reference.parse("blocked.example/img:1"), blocked_by="blocked.example")
    with pytest.raises(oci.Blocked) as raised:
        await try_in_order([source], "/etc/containers/registries.conf", "resolving", attempt)
    assert str(raised.value) == (
        "resolving blocked.example/img:1: registry blocked.example is blocked by "
        "/etc/containers/registries.conf ([[registry]] prefix 'blocked.example' sets blocked = true)"
    )


# --- following the file ------------------------------------------------------------------------


def test_the_file_is_re_read_when_it_changes_as_a_configmap_does(tmp_path: Path) -> None:
    directory = tmp_path / "containers"
    conf = oci.RegistriesConf(directory / "registries.conf")
    assert conf.current().registries == ()  # no file: no rules
    project(directory, {"registries.conf": b'[[registry]]\nlocation = "a.example"\nblocked = true\n'})
    assert [r.prefix for r in conf.current().registries] == ["a.example"]
    generation = conf.generation
    assert conf.current() is conf.current()  # unchanged: not read again
    assert conf.generation == generation
    project(directory, {"registries.conf": b"[[registry\n"})
    with pytest.raises(oci.InvalidRegistriesConf, match=f"{directory}/registries.conf is not valid TOML"):
        conf.current()
    project(directory, {"registries.conf": b'[[registry]]\nlocation = "b.example"\n'})
    assert [r.prefix for r in conf.current().registries] == ["b.example"]


def test_an_unreadable_file_fails_every_pull(tmp_path: Path) -> None:
    path = tmp_path / "registries.conf"
    path.write_bytes(b"\xff\xfe")
    with pytest.raises(oci.InvalidRegistriesConf, match="cannot be read"):
        oci.RegistriesConf(path).current()
    assert os.path.exists(path)
