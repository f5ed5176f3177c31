"""A bundle that needs a namespace to watch, planned without one: the refusal names the flag and a
value that works, from the install modes the catalog gives the bundle."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from olm.api import conditions as api
from olm.cli.catalogs.content import CatalogPackages
from olm.cli.extensions import watchnamespace
from olm.cli.extensions.plan import extension_object, refusal_message
from olm.pipeline.catalogs import CatalogRef, PackageContent, parse_lines
from olm.pipeline.plan import Refused, for_bundle
from olm.pipeline.resolve import ResolvedBundle

PACKAGE = "sleepy"
BUNDLE = f"{PACKAGE}.v1.0.0"
NAMESPACE = "sleepy-system"
MISSING = (
    "invalid ClusterExtension configuration: invalid ClusterExtension configuration: invalid "
    'configuration: required field "watchNamespace" is missing'
)
"""The renderer's refusal of a bundle without AllNamespaces planned without `watchNamespace`."""


def refusal(message: str = MISSING) -> str:
    """`message` as operator-controller writes it about the resolved bundle."""
    bundle = ResolvedBundle(
        package=PACKAGE, name=BUNDLE, version="1.0.0", image="registry.example/sleepy:1", catalog="demo"
    )
    return for_bundle(bundle, message)


def content(*supported: str, package: str = PACKAGE) -> PackageContent:
    """`package`, its one bundle (version 1.0.0) supporting the install modes `supported` (no CSV
    metadata at all when none is given)."""
    bundle = f"{package}.v1.0.0"
    properties: list[dict[str, Any]] = [
        {"type": "olm.package", "value": {"packageName": package, "version": "1.0.0"}}
    ]
    if supported:
        modes = [
            {"type": mode, "supported": mode in supported}
            for mode in ("OwnNamespace", "SingleNamespace", "MultiNamespace", "AllNamespaces")
        ]
        properties.append({"type": "olm.csv.metadata", "value": {"installModes": modes}})
    documents = [
        {"schema": "olm.package", "name": package, "defaultChannel": "stable"},
        {"schema": "olm.bundle", "name": bundle, "package": package, "image": "i", "properties": properties},
        {"schema": "olm.channel", "name": "stable", "package": package, "entries": [{"name": bundle}]},
    ]
    return parse_lines("demo", package, [orjson.dumps(d) for d in documents])


def advise(packages: list[PackageContent], *, flag: bool = True, message: str = MISSING) -> str | None:
    return watchnamespace.advice(
        api.REASON_INVALID_CONFIGURATION,
        refusal(message),
        given=None,
        install_namespace=NAMESPACE,
        packages=packages,
        flag=flag,
    )


def test_own_namespace_only_names_the_install_namespace() -> None:
    advice = advise([content("OwnNamespace")])
    assert advice == (
        f"the bundle supports OwnNamespace but not AllNamespaces: pass --watch-namespace {NAMESPACE} "
        "(its install namespace)"
    )


def test_single_namespace_only_asks_for_another_namespace() -> None:
    advice = advise([content("SingleNamespace")])
    assert advice is not None
    assert advice.startswith("the bundle supports SingleNamespace but not AllNamespaces: ")
    assert f"pass --watch-namespace another namespace than its install namespace {NAMESPACE}" in advice


@pytest.mark.parametrize(
    "packages",
    [
        pytest.param([content("OwnNamespace", "SingleNamespace")], id="both-supported"),
        pytest.param([content()], id="no-csv-metadata"),
        pytest.param([], id="bundle-not-in-the-catalogs-read"),
    ],
)
def test_either_mode_when_both_are_possible_or_the_catalog_does_not_say(
    packages: list[PackageContent],
) -> None:
    advice = advise(packages)
    assert advice == (
        f"the bundle does not support AllNamespaces: pass --watch-namespace {NAMESPACE} to watch its "
        "install namespace (OwnNamespace), or another namespace to watch that one (SingleNamespace)"
    )


def test_a_command_without_the_flag_names_the_spec_field() -> None:
    advice = advise([content("OwnNamespace")], flag=False)
    assert advice is not None
    assert f"set spec.config.inline.watchNamespace to {NAMESPACE}" in advice
    assert "--watch-namespace" not in advice


@pytest.mark.parametrize(
    ("reason", "message", "given"),
    [
        pytest.param(api.REASON_INVALID_CONFIGURATION, MISSING, "elsewhere", id="a-namespace-was-given"),
        pytest.param(api.REASON_BLOCKED, MISSING, None, id="another-reason"),
        pytest.param(
            api.REASON_INVALID_CONFIGURATION,
            "invalid option(s): invalid target namespaces []: at least one target namespace must be "
            "specified",
            None,
            id="multinamespace-only-bundle",
        ),
    ],
)
def test_no_advice_for_other_refusals(reason: str, message: str, given: str | None) -> None:
    advice = watchnamespace.advice(
        reason,
        refusal(message),
        given=given,
        install_namespace=NAMESPACE,
        packages=[content("OwnNamespace")],
    )
    assert advice is None


def test_the_install_modes_are_those_of_the_bundle_the_message_names() -> None:
    other = content("AllNamespaces", package="awake")
    modes = watchnamespace.install_modes(refusal(), [other, content("SingleNamespace")])
    assert modes == frozenset({"SingleNamespace"})
    assert watchnamespace.install_modes("no bundle named here", [content("OwnNamespace")]) is None


def test_olmctl_install_says_the_refusal_and_then_what_to_pass() -> None:
    extension = extension_object("sleepy", PACKAGE, namespace=NAMESPACE, service_account="installer")
    refused = Refused(api.REASON_INVALID_CONFIGURATION, refusal(), retry=False)
    ref = CatalogRef(
        name="demo", digest="registry.example/demo@sha256:00", base_url="https://c/catalogs/demo"
    )
    message = refusal_message(
        refused, extension, {ref: CatalogPackages({PACKAGE: content("OwnNamespace")}, {})}, flag=True
    )
    assert message == (
        f"{refusal()}; the bundle supports OwnNamespace but not AllNamespaces: pass --watch-namespace "
        f"{NAMESPACE} (its install namespace)"
    )
    given = extension_object(
        "sleepy", PACKAGE, namespace=NAMESPACE, service_account="installer", config={"watchNamespace": "x"}
    )
    assert (
        refusal_message(
            refused, given, {ref: CatalogPackages({PACKAGE: content("OwnNamespace")}, {})}, flag=True
        )
        == refusal()
    )
