"""Image references and digests parse as the distribution grammar says, and nothing else does."""

from __future__ import annotations

import pytest

from olm import oci

HEX = "a" * 64


@pytest.mark.parametrize(
    ("text", "registry", "repository", "tag", "digest"),
    [
        pytest.param(
            "quay.io/org/catalog:v4.20", "quay.io", "org/catalog", "v4.20", None, id="host-path-tag"
        ),
        pytest.param(
            "127.0.0.1:5000/a/b/c", "127.0.0.1:5000", "a/b/c", "latest", None, id="port-default-tag"
        ),
        pytest.param(
            f"localhost/x@sha256:{HEX}", "localhost", "x", None, f"sha256:{HEX}", id="localhost-digest"
        ),
        pytest.param(f"r.io/x:v1@sha256:{HEX}", "r.io", "x", "v1", f"sha256:{HEX}", id="tag-and-digest"),
        pytest.param("busybox", "docker.io", "library/busybox", "latest", None, id="docker-hub-official"),
        pytest.param("org/img:1", "docker.io", "org/img", "1", None, id="docker-hub-user"),
        pytest.param(
            "docker.io/busybox", "docker.io", "library/busybox", "latest", None, id="docker-io-short"
        ),
        pytest.param("r.io/a.b_c__d-e--f/g", "r.io", "a.b_c__d-e--f/g", "latest", None, id="separators"),
        pytest.param("[::1]:5000/x:y", "[::1]:5000", "x", "y", None, id="ipv6-host"),
    ],
)
def test_valid_references(
    text: str, registry: str, repository: str, tag: str | None, digest: str | None
) -> None:
    reference = oci.Reference.parse(text)
    assert (reference.registry, reference.repository, reference.tag) == (registry, repository, tag)
    assert (str(reference.digest) if reference.digest else None) == digest


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("", "not an image reference", id="empty"),
        pytest.param(" quay.io/x", "not an image reference", id="whitespace"),
        pytest.param("quay.io/Org/x", "path component", id="uppercase-path"),
        pytest.param("quay.io/x:", "tag", id="empty-tag"),
        pytest.param("quay.io/x:-bad", "tag", id="tag-leading-dash"),
        pytest.param("quay.io/x:" + "t" * 129, "tag", id="tag-too-long"),
        pytest.param("quay.io/x@sha256:abc", "sha256 digest", id="short-digest"),
        pytest.param(f"quay.io/x@md5:{HEX}", "not supported", id="unknown-algorithm"),
        pytest.param("quay.io/", "no repository", id="no-path"),
        pytest.param("quay.io/a//b", "path component", id="empty-component"),
        pytest.param("quay.io/../etc", "path component", id="dot-dot"),
        pytest.param("bad_host.io:x/y", "registry host", id="bad-host"),
        pytest.param("r.io/" + "a" * 300, "longer than 255", id="too-long"),
        pytest.param("localhost:99999/x", "port 99999 is out of range", id="port-over-65535"),
        pytest.param("localhost:0/x", "port 0 is out of range", id="port-zero"),
    ],
)
def test_invalid_references(text: str, message: str) -> None:
    with pytest.raises(oci.InvalidReference, match=message):
        oci.Reference.parse(text)


def test_canonical_form_drops_the_tag() -> None:
    reference = oci.Reference.parse("quay.io/org/catalog:latest")
    digest = oci.Digest.parse(f"sha256:{HEX}")
    assert str(reference.with_digest(digest)) == f"quay.io/org/catalog@sha256:{HEX}"
    assert reference.with_digest(digest).target == f"sha256:{HEX}"
    assert reference.target == "latest"


def test_docker_hub_talks_to_its_api_host() -> None:
    assert oci.Reference.parse("busybox").api_host == "registry-1.docker.io"
    assert oci.Reference.parse("quay.io/x").api_host == "quay.io"


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(f"sha256:{HEX}", id="sha256"),
        pytest.param("sha512:" + "0" * 128, id="sha512"),
    ],
)
def test_digest_round_trips(text: str) -> None:
    assert str(oci.Digest.parse(text)) == text


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("sha256:" + "A" * 64, id="uppercase-hex"),
        pytest.param("sha256" + HEX, id="no-colon"),
        pytest.param("sha512:" + HEX, id="wrong-length"),
    ],
)
def test_invalid_digests(text: str) -> None:
    with pytest.raises(oci.InvalidReference):
        oci.Digest.parse(text)


def test_digest_of_bytes() -> None:
    assert (
        str(oci.Digest.of(b"")) == "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    )
