"""A global pull Secret becomes a keychain, or a reason it cannot be used."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from olm import oci
from olm.process import pullconfig


def _secret(data: dict[str, str]) -> dict[str, Any]:
    encoded = {key: base64.b64encode(value.encode()).decode() for key, value in data.items()}
    return {
        "metadata": {"namespace": "olmv1-system", "name": "pull", "resourceVersion": "1"},
        "data": encoded,
    }


def _reference(text: str) -> oci.Reference:
    return oci.Reference.parse(text)


def test_an_absent_secret_is_anonymous_and_no_problem() -> None:
    keychain, problem = pullconfig.keychain_from(None)
    assert len(keychain) == 0
    assert problem is None


@pytest.mark.parametrize("key", [".dockerconfigjson", ".dockercfg"])
def test_a_dockerconfigjson_secret_gives_its_credentials(key: str) -> None:
    auths = {"registry.example:5000": {"username": "u", "password": "p"}}
    document: dict[str, Any] = {"auths": auths} if key == ".dockerconfigjson" else auths
    keychain, problem = pullconfig.keychain_from(_secret({key: json.dumps(document)}))
    assert problem is None
    credentials = keychain.for_reference(_reference("registry.example:5000/org/image:1"))
    assert credentials is not None
    assert (credentials.username, credentials.password) == ("u", "p")


@pytest.mark.parametrize(
    ("secret", "problem"),
    [
        pytest.param(_secret({"other": "x"}), "no .dockerconfigjson or .dockercfg data", id="no-key"),
        pytest.param(
            {"metadata": {}, "data": {".dockerconfigjson": "***"}}, "its data is not base64", id="not-base64"
        ),
        pytest.param(_secret({".dockerconfigjson": "not json"}), "not valid JSON", id="not-json"),
        pytest.param(
            _secret({".dockerconfigjson": json.dumps({"auths": {"h": {"auth": "bm9jb2xvbg=="}}})}),
            "not base64 of 'user:password'",
            id="auth-without-colon",
        ),
    ],
)
def test_an_unusable_secret_says_why_and_is_anonymous(secret: dict[str, Any], problem: str) -> None:
    keychain, found = pullconfig.keychain_from(secret)
    assert len(keychain) == 0
    assert found is not None
    assert problem in found


@pytest.mark.parametrize("flag", ["name-only", "/name", "namespace/"])
def test_a_malformed_flag_exits(flag: str) -> None:
    with pytest.raises(SystemExit, match="<namespace>/<name>"):
        pullconfig.secret_reference(flag)


def test_the_flag_names_namespace_and_secret() -> None:
    assert pullconfig.secret_reference("olmv1-system/olm-global-pull-secret") == (
        "olmv1-system",
        "olm-global-pull-secret",
    )
