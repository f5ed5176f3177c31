"""Pull secrets become keychains; WWW-Authenticate headers become challenges; retries back off."""

from __future__ import annotations

import base64
import json

import pytest

from olm import oci


def _auth(user: str, password: str) -> str:
    return base64.b64encode(f"{user}:{password}".encode()).decode()


def _ref(text: str) -> oci.Reference:
    return oci.Reference.parse(text)


def test_dockerconfigjson_auth_field() -> None:
    keychain = oci.Keychain.from_dockerconfigjson(
        json.dumps({"auths": {"quay.io": {"auth": _auth("u", "p:w")}}})
    )
    credentials = keychain.for_reference(_ref("quay.io/org/x:1"))
    assert credentials is not None
    assert (credentials.username, credentials.password) == ("u", "p:w")
    assert credentials.basic() == "Basic " + _auth("u", "p:w")


def test_dockerconfigjson_username_and_password_fields() -> None:
    keychain = oci.Keychain.from_dockerconfigjson(
        json.dumps({"auths": {"127.0.0.1:5000": {"username": "a", "password": "b"}}})
    )
    credentials = keychain.for_reference(_ref("127.0.0.1:5000/x"))
    assert credentials is not None
    assert (credentials.username, credentials.password) == ("a", "b")


def test_legacy_dockercfg_format() -> None:
    keychain = oci.Keychain.from_dockerconfigjson(json.dumps({"r.io": {"auth": _auth("u", "p")}}))
    assert keychain.for_reference(_ref("r.io/x")) is not None


@pytest.mark.parametrize(
    ("key", "image", "found"),
    [
        pytest.param("https://index.docker.io/v1/", "busybox", True, id="docker-hub-url"),
        pytest.param("https://quay.io", "quay.io/a/b", True, id="url-with-scheme"),
        pytest.param("quay.io/org", "quay.io/org/x", True, id="path-prefix"),
        pytest.param("quay.io/org", "quay.io/other/x", False, id="other-path"),
        pytest.param("quay.io/or", "quay.io/org/x", False, id="prefix-is-by-component"),
        pytest.param("quay.io", "registry.io/x", False, id="other-host"),
    ],
)
def test_keychain_matching(key: str, image: str, found: bool) -> None:
    keychain = oci.Keychain.from_dockerconfigjson(json.dumps({"auths": {key: {"auth": _auth("u", "p")}}}))
    assert (keychain.for_reference(_ref(image)) is not None) is found


def test_most_specific_key_wins() -> None:
    keychain = oci.Keychain.from_dockerconfigjson(
        json.dumps(
            {"auths": {"quay.io": {"auth": _auth("host", "p")}, "quay.io/org": {"auth": _auth("org", "p")}}}
        )
    )
    org = keychain.for_reference(_ref("quay.io/org/x"))
    other = keychain.for_reference(_ref("quay.io/else/x"))
    assert org is not None
    assert other is not None
    assert (org.username, other.username) == ("org", "host")


def test_merged_keychains_prefer_the_first() -> None:
    first = oci.Keychain.from_dockerconfigjson(json.dumps({"auths": {"r.io": {"auth": _auth("first", "p")}}}))
    second = oci.Keychain.from_dockerconfigjson(
        json.dumps({"auths": {"r.io": {"auth": _auth("second", "p")}, "q.io": {"auth": _auth("q", "p")}}})
    )
    merged = first.merged(second)
    r_io, q_io = merged.for_reference(_ref("r.io/x")), merged.for_reference(_ref("q.io/x"))
    assert r_io is not None
    assert q_io is not None
    assert (r_io.username, q_io.username) == ("first", "q")
    assert len(merged) == 2


@pytest.mark.parametrize(
    ("data", "message"),
    [
        pytest.param("not json", "not valid JSON", id="not-json"),
        pytest.param("[]", "not a JSON object", id="array"),
        pytest.param('{"auths": []}', "'auths' is not an object", id="auths-array"),
        pytest.param('{"auths": {"r.io": {"auth": "%%%"}}}', "not base64", id="bad-base64"),
        pytest.param(
            json.dumps({"auths": {"r.io": {"auth": _auth("nocolon", "")[:-4]}}}), "not base64", id="no-colon"
        ),
    ],
)
def test_invalid_pull_secrets(data: str, message: str) -> None:
    with pytest.raises(oci.InvalidPullSecret, match=message):
        oci.Keychain.from_dockerconfigjson(data)


def test_credentials_never_print_the_password() -> None:
    assert "s3cret" not in repr(oci.Credentials("u", "s3cret"))


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        pytest.param(
            'Bearer realm="https://auth.example/token",service="registry.example",scope="repository:a/b:pull"',
            [
                (
                    "bearer",
                    {
                        "realm": "https://auth.example/token",
                        "service": "registry.example",
                        "scope": "repository:a/b:pull",
                    },
                )
            ],
            id="bearer",
        ),
        pytest.param('Basic realm="Registry Realm"', [("basic", {"realm": "Registry Realm"})], id="basic"),
        pytest.param(
            'Bearer realm="a", error="invalid_token", Basic realm=x',
            [("bearer", {"realm": "a", "error": "invalid_token"}), ("basic", {"realm": "x"})],
            id="two-challenges",
        ),
        pytest.param(
            r'Basic realm="a \"quoted\" realm"', [("basic", {"realm": 'a "quoted" realm'})], id="escapes"
        ),
        pytest.param(
            "Negotiate, Basic realm=x", [("negotiate", {}), ("basic", {"realm": "x"})], id="bare-scheme"
        ),
        pytest.param("", [], id="empty"),
    ],
)
def test_parse_challenges(header: str, expected: list[tuple[str, dict[str, str]]]) -> None:
    assert [(c.scheme, c.params) for c in oci.parse_challenges(header)] == expected


def test_backoff_grows_is_capped_and_jittered() -> None:
    policy = oci.RetryPolicy(initial_delay=1.0, max_delay=5.0, jitter=0.5, random=lambda: 0.5)
    assert [policy.delay(n) for n in (1, 2, 3, 4)] == [1.0, 2.0, 4.0, 5.0]
    low = oci.RetryPolicy(initial_delay=1.0, jitter=0.5, random=lambda: 0.0)
    high = oci.RetryPolicy(initial_delay=1.0, jitter=0.5, random=lambda: 1.0)
    assert (low.delay(1), high.delay(1)) == (0.5, 1.5)
