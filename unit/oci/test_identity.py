"""`signedIdentity` rules: which names a signature may carry for the reference being pulled."""

from __future__ import annotations

import pytest

from olm import oci
from olm.oci import _identity

DIGEST = "sha256:" + "b" * 64


def rule(document: dict[str, str] | None) -> _identity.IdentityRule:
    return _identity.parse_rule(document, "test")


@pytest.mark.parametrize(
    ("identity", "intended", "signed", "accepted"),
    [
        pytest.param(
            None, f"reg.example/app@{DIGEST}", "reg.example/app", True, id="default-digest-same-repo"
        ),
        pytest.param(
            None, f"reg.example/app@{DIGEST}", "reg.example/other", False, id="default-digest-other-repo"
        ),
        pytest.param(None, "reg.example/app:v1", "reg.example/app:v1", True, id="default-tag-exact"),
        pytest.param(None, "reg.example/app:v1", "reg.example/app", False, id="default-tag-needs-the-tag"),
        pytest.param(None, "reg.example/app:v1", "reg.example/app:v2", False, id="default-other-tag"),
        pytest.param(
            {"type": "matchRepository"},
            "reg.example/app:v1",
            "reg.example/app",
            True,
            id="repository-any-tag",
        ),
        pytest.param(
            {"type": "matchRepository"}, "reg.example/app:v1", "reg.example/ap", False, id="repository-other"
        ),
        pytest.param(
            {"type": "matchExact"},
            f"reg.example/app@{DIGEST}",
            "reg.example/app",
            False,
            id="exact-name-only",
        ),
        pytest.param(
            {"type": "matchExact"}, "reg.example/app:v1", "reg.example/app:v1", True, id="exact-same"
        ),
        pytest.param(
            {"type": "matchExact"}, "busybox:1", "docker.io/library/busybox:1", True, id="exact-expanded"
        ),
        pytest.param(
            {"type": "exactReference", "dockerReference": "src.example/app:v1"},
            "reg.example/app:v1",
            "src.example/app:v1",
            True,
            id="exact-reference",
        ),
        pytest.param(
            {"type": "exactRepository", "dockerRepository": "src.example/app"},
            "reg.example/app:v1",
            "src.example/app:v9",
            True,
            id="exact-repository",
        ),
        pytest.param(
            {"type": "exactRepository", "dockerRepository": "src.example/app"},
            "reg.example/app:v1",
            "reg.example/app:v1",
            False,
            id="exact-repository-not-the-pulled-one",
        ),
        pytest.param(
            {"type": "remapIdentity", "prefix": "mirror.example/up", "signedPrefix": "src.example/ns"},
            f"mirror.example/up/app@{DIGEST}",
            "src.example/ns/app",
            True,
            id="remap-prefix",
        ),
        pytest.param(
            {"type": "remapIdentity", "prefix": "mirror.example/up", "signedPrefix": "src.example/ns"},
            f"mirror.example/upx/app@{DIGEST}",
            "mirror.example/upx/app",
            True,
            id="remap-no-prefix-match-compares-as-is",
        ),
        pytest.param(
            {"type": "remapIdentity", "prefix": "mirror.example/up", "signedPrefix": "src.example/ns"},
            f"mirror.example/up/app@{DIGEST}",
            "mirror.example/up/app",
            False,
            id="remap-original-name-refused",
        ),
    ],
)
def test_identity_rules(identity: dict[str, str] | None, intended: str, signed: str, accepted: bool) -> None:
    parsed = rule(identity)
    assert parsed.matches(oci.Reference.parse(intended), _identity.parse_named(signed)) is accepted


def test_parse_named_keeps_a_bare_repository_bare() -> None:
    assert _identity.parse_named("reg.example:5000/app").tag is None
    assert _identity.parse_named("reg.example:5000/app:v1").tag == "v1"
    assert _identity.parse_named(f"reg.example/app@{DIGEST}").tag is None


@pytest.mark.parametrize(
    ("document", "message"),
    [
        pytest.param(
            {"type": "exactReference", "dockerReference": "reg.example/app"},
            "neither a tag nor a digest",
            id="bare",
        ),
        pytest.param({"type": "exactRepository"}, "dockerRepository", id="missing"),
        pytest.param(
            {"type": "remapIdentity", "prefix": "busybox/x", "signedPrefix": "a.example"},
            "fully expanded",
            id="prefix",
        ),
        pytest.param({"type": "matchExact", "extra": "1"}, "unknown field(s) extra", id="field"),
    ],
)
def test_invalid_rules(document: dict[str, str], message: str) -> None:
    with pytest.raises(oci.InvalidSignaturePolicy) as raised:
        rule(document)
    assert message in str(raised.value)
