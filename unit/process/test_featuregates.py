"""`--feature-gates`: upstream's syntax, gate names and messages; what each gate is here."""

from __future__ import annotations

import argparse

import pytest

from olm.process import featuregates
from olm.process.featuregates import CATALOGD, OPERATOR_CONTROLLER


def test_the_gates_are_upstreams_per_process() -> None:
    assert [g.name for g in OPERATOR_CONTROLLER.gates] == [
        "BoxcutterRuntime",
        "BundleReleaseSupport",
        "DeploymentConfig",
        "SingleOwnNamespaceInstallSupport",
        "WebhookProviderCertManager",
        "WebhookProviderOpenshiftServiceCA",
    ]
    assert [g.name for g in CATALOGD.gates] == ["APIV1MetasHandler", "GraphQLCatalogQueries"]


def test_with_no_flag_each_gate_has_its_state_here() -> None:
    assert OPERATOR_CONTROLLER.resolve({}) == {
        "BoxcutterRuntime": True,
        "BundleReleaseSupport": False,
        "DeploymentConfig": True,
        "SingleOwnNamespaceInstallSupport": True,
        "WebhookProviderCertManager": True,
        "WebhookProviderOpenshiftServiceCA": True,
    }
    assert CATALOGD.resolve({}) == {"APIV1MetasHandler": True, "GraphQLCatalogQueries": False}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("Foo=true", "unrecognized feature gate: Foo", id="unknown"),
        pytest.param("BoxcutterRuntime", "missing bool value for BoxcutterRuntime", id="no-value"),
        pytest.param(
            "BoxcutterRuntime=yes",
            'invalid value of BoxcutterRuntime=yes, err: strconv.ParseBool: parsing "yes": invalid syntax',
            id="not-a-go-bool",
        ),
        pytest.param(
            "APIV1MetasHandler=true", "unrecognized feature gate: APIV1MetasHandler", id="other-process"
        ),
    ],
)
def test_what_upstream_refuses_is_refused_in_its_words(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=r"\w") as refused:
        OPERATOR_CONTROLLER.parse(text)
    assert str(refused.value) == message


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("BoxcutterRuntime=true", {"BoxcutterRuntime": True}, id="true"),
        pytest.param(" BoxcutterRuntime = T ,", {"BoxcutterRuntime": True}, id="go-spelling-and-spaces"),
        pytest.param(
            "BundleReleaseSupport=0,AllBeta=FALSE",
            {"BundleReleaseSupport": False, "AllBeta": False},
            id="pairs",
        ),
        pytest.param("", {}, id="empty"),
    ],
)
def test_pairs_parse_as_gos_parser_reads_them(text: str, expected: dict[str, bool]) -> None:
    assert OPERATOR_CONTROLLER.parse(text) == expected


@pytest.mark.parametrize(
    ("gates", "requested", "message"),
    [
        pytest.param(
            OPERATOR_CONTROLLER,
            {"BoxcutterRuntime": False},
            "cannot set feature gate BoxcutterRuntime to false, feature is locked to true here: every",
            id="always-on-refuses-false",
        ),
        pytest.param(
            OPERATOR_CONTROLLER,
            {"BundleReleaseSupport": True},
            "cannot set feature gate BundleReleaseSupport to true, feature is locked to false here",
            id="not-implemented-refuses-true",
        ),
        pytest.param(
            CATALOGD,
            {"GraphQLCatalogQueries": True},
            "cannot set feature gate GraphQLCatalogQueries to true, feature is locked to false here",
            id="graphql",
        ),
        pytest.param(
            CATALOGD,
            {"AllAlpha": False},
            "cannot set feature gate APIV1MetasHandler to false (by AllAlpha=false), feature is locked",
            id="all-alpha-reaches-unnamed-gates",
        ),
        pytest.param(
            OPERATOR_CONTROLLER,
            {"WebhookProviderCertManager": False},
            "cannot set feature gates WebhookProviderCertManager=false,"
            "WebhookProviderOpenshiftServiceCA=true: they choose OpenShift's service CA",
            id="service-ca-is-not-a-provider-here",
        ),
    ],
)
def test_states_this_implementation_cannot_have_are_refused_naming_the_gate(
    gates: featuregates.Gates, requested: dict[str, bool], message: str
) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        gates.resolve(requested)


def test_all_alpha_yields_to_a_gate_named_itself() -> None:
    states = CATALOGD.resolve({"AllAlpha": True, "APIV1MetasHandler": True, "GraphQLCatalogQueries": False})
    assert states == {"APIV1MetasHandler": True, "GraphQLCatalogQueries": False}


def test_the_webhook_provider_gate_is_a_real_switch() -> None:
    states = OPERATOR_CONTROLLER.resolve(
        {"WebhookProviderCertManager": False, "WebhookProviderOpenshiftServiceCA": False}
    )
    assert states["WebhookProviderCertManager"] is False


def _parser(gates: featuregates.Gates) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="p", exit_on_error=False)
    featuregates.add_flag(parser, gates)
    return parser


def test_upstreams_experimental_manifest_gates_resolve_or_are_refused_by_name() -> None:
    """The values upstream v1.11.0's manifests/experimental.yaml passes, one flag per gate."""
    args = _parser(OPERATOR_CONTROLLER).parse_args(
        [
            "--feature-gates=BoxcutterRuntime=true",
            "--feature-gates=DeploymentConfig=true",
            "--feature-gates=SingleOwnNamespaceInstallSupport=true",
            "--feature-gates=WebhookProviderCertManager=true",
            "--feature-gates=WebhookProviderOpenshiftServiceCA=false",
        ]
    )
    assert args.feature_gates.resolve()["WebhookProviderOpenshiftServiceCA"] is False
    with_release = _parser(OPERATOR_CONTROLLER).parse_args(["--feature-gates=BundleReleaseSupport=true"])
    with pytest.raises(ValueError, match="BundleReleaseSupport to true"):
        with_release.feature_gates.resolve()


def test_a_later_flag_wins_and_the_request_is_checked_once_all_are_read() -> None:
    args = _parser(OPERATOR_CONTROLLER).parse_args(
        ["--feature-gates=BoxcutterRuntime=false", "--feature-gates=BoxcutterRuntime=true"]
    )
    assert args.feature_gates.resolve()["BoxcutterRuntime"] is True


def test_a_bad_pair_is_an_argument_error() -> None:
    with pytest.raises(argparse.ArgumentError, match="unrecognized feature gate: Nope"):
        _parser(CATALOGD).parse_args(["--feature-gates=Nope=true"])
