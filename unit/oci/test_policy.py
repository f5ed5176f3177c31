"""containers-policy.json(5) documents: strict parsing, and the scope an image's requirements come from."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import orjson
import pytest

from olm import oci
from olm.oci import _policy

DIGEST = "sha256:" + "a" * 64


def policy(docker: dict[str, Any], default: str = "reject") -> oci.Policy:
    document = {"default": [{"type": default}], "transports": {"docker": docker}}
    return oci.parse_policy(orjson.dumps(document))


ACCEPT = [{"type": "insecureAcceptAnything"}]


@pytest.mark.parametrize(
    ("reference", "expected"),
    [
        pytest.param(
            "reg.example:5000/ns/app:v1",
            [
                "reg.example:5000/ns/app:v1",
                "reg.example:5000/ns/app",
                "reg.example:5000/ns",
                "reg.example:5000",
                "*.example",
            ],
            id="tag-repo-namespace-host-wildcard",
        ),
        pytest.param(
            f"a.b.example/app@{DIGEST}",
            [f"a.b.example/app@{DIGEST}", "a.b.example/app", "a.b.example", "*.b.example", "*.example"],
            id="digest-and-nested-wildcards",
        ),
        pytest.param(
            "busybox",
            [
                "docker.io/library/busybox:latest",
                "docker.io/library/busybox",
                "docker.io/library",
                "docker.io",
                "*.io",
            ],
            id="docker-hub-expanded",
        ),
        pytest.param(
            "localhost:5000/app:v1",
            ["localhost:5000/app:v1", "localhost:5000/app", "localhost:5000"],
            id="no-dot-no-wildcard",
        ),
    ],
)
def test_scope_candidates_run_from_most_to_least_specific(reference: str, expected: list[str]) -> None:
    assert _policy.scope_candidates(oci.Reference.parse(reference)) == expected


@pytest.mark.parametrize(
    ("scopes", "reference", "chosen"),
    [
        pytest.param(
            ["reg.example/ns", "reg.example/ns/app"],
            "reg.example/ns/app:v1",
            "reg.example/ns/app",
            id="repo-over-namespace",
        ),
        pytest.param(
            ["reg.example/ns/app", "reg.example/ns/app:v1"],
            "reg.example/ns/app:v1",
            "reg.example/ns/app:v1",
            id="tag-over-repo",
        ),
        pytest.param(
            ["reg.example", "*.example"], "reg.example/x/y:v1", "reg.example", id="host-over-wildcard"
        ),
        pytest.param(
            ["*.example", ""], "a.reg.example/x:v1", "*.example", id="wildcard-over-transport-default"
        ),
        pytest.param(
            ["*.reg.example"], "reg.example/x:v1", "", id="wildcard-does-not-match-the-domain-itself"
        ),
        pytest.param(["reg.example/ns"], "reg.example/nsx/app:v1", "", id="namespace-is-a-whole-component"),
        pytest.param(["reg.example:5000"], "reg.example/app:v1", "", id="port-is-part-of-the-host"),
        pytest.param(["*.example"], "reg.example:5000/app:v1", "*.example", id="wildcard-ignores-the-port"),
    ],
)
def test_the_most_specific_scope_wins(scopes: list[str], reference: str, chosen: str) -> None:
    docker = {scope: ACCEPT for scope in scopes} | {"": [{"type": "reject"}]}
    scope, _ = policy(docker).requirements_for(oci.Reference.parse(reference))
    assert scope.key == chosen


def test_without_a_docker_scope_the_global_default_applies() -> None:
    scope, requirements = policy({"other.example": ACCEPT}).requirements_for(
        oci.Reference.parse("reg.example/a:v1")
    )
    assert scope.is_default
    assert str(scope) == 'the policy "default"'
    assert requirements == (_policy.Reject(),)


def test_every_requirement_of_a_scope_is_kept_in_order(tmp_path: Path) -> None:
    key = tmp_path / "k.pub"
    parsed = policy(
        {"reg.example": [{"type": "insecureAcceptAnything"}, {"type": "sigstoreSigned", "keyPath": str(key)}]}
    )
    _, requirements = parsed.requirements_for(oci.Reference.parse("reg.example/a:v1"))
    assert [r.name for r in requirements] == ["insecureAcceptAnything", "sigstoreSigned"]


def test_key_forms_are_read_and_key_data_is_base64() -> None:
    pem = b"-----BEGIN PUBLIC KEY-----\n...\n"
    parsed = policy(
        {
            "a.example": [{"type": "sigstoreSigned", "keyPaths": ["/k1", "/k2"]}],
            "b.example": [{"type": "sigstoreSigned", "keyData": base64.b64encode(pem).decode()}],
        }
    )
    assert parsed.docker["a.example"][0] == _policy.SigstoreSigned(
        key_paths=(Path("/k1"), Path("/k2")), key_data=(), identity=oci._identity.MatchRepoDigestOrExact()
    )
    second = parsed.docker["b.example"][0]
    assert isinstance(second, _policy.SigstoreSigned)
    assert second.key_data == (pem,)


@pytest.mark.parametrize(
    ("requirement", "what"),
    [
        pytest.param(
            {"type": "signedBy", "keyType": "GPGKeys", "keyPath": "/k"}, "GPG signatures", id="signedBy"
        ),
        pytest.param(
            {"type": "sigstoreSigned", "fulcio": {}, "rekorPublicKeyPath": "/r"},
            "fulcio, rekorPublicKeyPath",
            id="fulcio",
        ),
        pytest.param(
            {"type": "sigstoreSigned", "keyPath": "/k", "rekorPublicKeyPath": "/r"},
            "rekorPublicKeyPath",
            id="rekor-required",
        ),
    ],
)
def test_unsupported_requirements_load_but_are_marked(requirement: dict[str, object], what: str) -> None:
    parsed = policy({"reg.example": [requirement]})
    assert parsed.docker["reg.example"] == (_policy.Unsupported(str(requirement["type"]), what),)


def test_other_transports_are_read_and_ignored() -> None:
    document = {
        "default": [{"type": "insecureAcceptAnything"}],
        "transports": {"docker-daemon": {"": [{"type": "insecureAcceptAnything"}]}, "atomic": {"x": ACCEPT}},
    }
    assert oci.parse_policy(orjson.dumps(document)).docker == {}


@pytest.mark.parametrize(
    ("document", "message"),
    [
        pytest.param(b"{", "not valid JSON", id="json"),
        pytest.param(b"{}", '"default" is required', id="no-default"),
        pytest.param(b'{"default": []}', "non-empty list", id="empty-default"),
        pytest.param(
            b'{"default": [{"type": "accept"}]}', "unknown requirement type 'accept'", id="unknown-type"
        ),
        pytest.param(b'{"default": [{"type": "reject", "x": 1}]}', "unknown field(s) x", id="unknown-field"),
        pytest.param(
            b'{"default": [{"type": "reject"}], "extra": 1}',
            "unknown top-level field(s) extra",
            id="top-level",
        ),
        pytest.param(
            b'{"default": [{"type": "reject"}], '
            b'"transports": {"docker": {"library/busybox": [{"type": "reject"}]}}}',
            "docker.io/library/busybox",
            id="scope-not-expanded",
        ),
        pytest.param(
            b'{"default": [{"type": "reject"}], '
            b'"transports": {"docker": {"*.a:5000": [{"type": "reject"}]}}}',
            "wildcard scope",
            id="wildcard-with-port",
        ),
        pytest.param(
            b'{"default": [{"type": "sigstoreSigned", "keyPath": "/a", "keyData": "eA=="}]}',
            "exactly one of",
            id="two-key-sources",
        ),
        pytest.param(b'{"default": [{"type": "sigstoreSigned"}]}', "exactly one of", id="no-key"),
        pytest.param(
            b'{"default": [{"type": "sigstoreSigned", "keyData": "%%%"}]}', "not base64", id="key-data"
        ),
        pytest.param(
            b'{"default": [{"type": "sigstoreSigned", "keyPath": "/k", '
            b'"signedIdentity": {"type": "matchAll"}}]}',
            "unknown type 'matchAll'",
            id="identity-type",
        ),
    ],
)
def test_invalid_documents_say_what_is_wrong(document: bytes, message: str) -> None:
    with pytest.raises(oci.InvalidSignaturePolicy) as raised:
        oci.parse_policy(document)
    assert message in str(raised.value)
