"""The regular expressions behind the CEL rules, checked with Python's re (RE2-compatible subset)."""

from __future__ import annotations

import re

import pytest

from olm.api import models as api
from olm.api import rules
from olm.api.crdgen.crd import crd
from olm_testkit.api.versions import INVALID, VALID


@pytest.mark.parametrize("version", VALID)
def test_version_range_accepts(version: str) -> None:
    assert re.search(rules.VERSION_RANGE, version)


@pytest.mark.parametrize("version", INVALID)
def test_version_range_rejects(version: str) -> None:
    assert not re.search(rules.VERSION_RANGE, version)


@pytest.mark.parametrize(
    ("value", "label", "subdomain"),
    [
        pytest.param("abc-123", True, True, id="hyphenated"),
        pytest.param("1", True, True, id="single-digit"),
        pytest.param("some.package", False, True, id="dotted"),
        pytest.param("-start", False, False, id="leading-hyphen"),
        pytest.param("end-", False, False, id="trailing-hyphen"),
        pytest.param("Upper", False, False, id="uppercase"),
        pytest.param("a.-b", False, False, id="dot-then-hyphen"),
        pytest.param("some_thing", False, False, id="underscore"),
        pytest.param("", False, False, id="empty"),
    ],
)
def test_dns1123(value: str, label: bool, subdomain: bool) -> None:
    assert bool(re.search(rules.DNS1123_LABEL, value)) is label
    assert bool(re.search(rules.DNS1123_SUBDOMAIN, value)) is subdomain


@pytest.mark.parametrize(
    ("value", "ok"),
    [("1.2.3", True), ("0.6.0-rc.1+build.5", True), ("1.2", False), ("01.2.3", False), ("v1.2.3", False)],
)
def test_semver(value: str, ok: bool) -> None:
    assert bool(re.search(rules.SEMVER, value)) is ok


def _cel_rules() -> list[str]:
    found: list[str] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            found.extend(r["rule"] for r in node.get("x-kubernetes-validations", []))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for resource in api.RESOURCES:
        walk(crd(resource))
    return found


def test_every_regex_in_a_cel_rule_compiles_without_re2_incompatible_syntax() -> None:
    patterns = [p for rule in _cel_rules() for p in re.findall(r"r'([^']*)'", rule)]
    assert len(patterns) > 10
    for pattern in patterns:
        re.compile(pattern)
        # Look-around and back-references compile in Python but are rejected by RE2.
        assert not re.search(r"\(\?[=!<]|\\[1-9]", pattern), pattern
