"""Install modes: `watchNamespace` validated against the CSV, with upstream's messages."""

from __future__ import annotations

from typing import Any

import pytest

from olm import registryv1
from olm.pipeline import render
from unit.pipeline.render import samples

ALL, OWN, SINGLE, MULTI = "AllNamespaces", "OwnNamespace", "SingleNamespace", "MultiNamespace"
PREFIX = "invalid ClusterExtension configuration: invalid configuration: "
PATTERN = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
OWN_ONLY = (
    "invalid format for field \"watchNamespace\": 'some-ns' is not valid ownNamespaceInstallMode: "
    'invalid value "some-ns": must be "install-ns" (the namespace where the operator is installed) '
    "because this operator only supports OwnNamespace install mode"
)
SINGLE_ONLY = (
    "invalid format for field \"watchNamespace\": 'install-ns' is not valid singleNamespaceInstallMode: "
    'invalid value "install-ns": must be different from "install-ns" (the install namespace) because '
    "this operator uses SingleNamespace install mode to watch a different namespace"
)


@pytest.mark.parametrize(
    ("modes", "config", "message"),
    [
        pytest.param((OWN,), None, 'required field "watchNamespace" is missing', id="own-only-nil-config"),
        pytest.param((SINGLE,), {}, 'required field "watchNamespace" is missing', id="single-only-empty"),
        pytest.param(
            (OWN,), {"watchNamespace": None}, 'required field "watchNamespace" is missing', id="own-null"
        ),
        pytest.param((MULTI, OWN), {}, 'required field "watchNamespace" is missing', id="multi-own-missing"),
        pytest.param((ALL,), {"watchNamespace": "some-ns"}, 'unknown field "watchNamespace"', id="all-only"),
        pytest.param(
            (MULTI,), {"watchNamespace": "some-ns"}, 'unknown field "watchNamespace"', id="multi-only"
        ),
        pytest.param((ALL, MULTI), {"watchNamespace": "x"}, 'unknown field "watchNamespace"', id="all-multi"),
        pytest.param((ALL,), {"somekey": "v"}, 'unknown field "somekey"', id="additional-field"),
        pytest.param((ALL,), True, "invalid type: got boolean, want object", id="not-an-object"),
        pytest.param(
            (SINGLE,),
            {"watchNamespace": {"hello": "there"}},
            'invalid type for field "watchNamespace": got object, want string',
            id="watch-not-a-string",
        ),
        pytest.param((OWN,), {"watchNamespace": "some-ns"}, OWN_ONLY, id="own-only-other-namespace"),
        pytest.param(
            (SINGLE,), {"watchNamespace": "install-ns"}, SINGLE_ONLY, id="single-only-own-namespace"
        ),
        pytest.param(
            (SINGLE,),
            {"watchNamespace": "Not_Valid"},
            f'field "watchNamespace" must match pattern "{PATTERN}"',
            id="pattern",
        ),
        pytest.param(
            (SINGLE,),
            {"watchNamespace": "a" * 64},
            'field "watchNamespace" must have maximum length of 63 (len=64)',
            id="too-long",
        ),
        pytest.param(
            (SINGLE,),
            {"watchNamespace": ""},
            "multiple errors found:\n  - validation failed\n"
            '  - field "watchNamespace" must have minimum length of 1 (len=0)\n'
            f'  - field "watchNamespace" must match pattern "{PATTERN}"',
            id="empty-string",
        ),
        pytest.param(
            (ALL, OWN),
            {"watchNamespace": "some-ns"},
            "multiple errors found:\n"
            '  - invalid value for field "watchNamespace"\n'
            '  - invalid type for field "watchNamespace": got string, want null\n'
            f"  - {OWN_ONLY}",
            id="all-own-other-namespace",
        ),
        pytest.param(
            (ALL,),
            {"deploymentConfig": {"selector": {"matchLabels": {"app": "x"}}}},
            'unknown field "selector"',
            id="deployment-config-selector",
        ),
        pytest.param(
            (ALL,),
            {"deploymentConfig": {"env": {"name": "x"}}},
            'invalid type for field "deploymentConfig.env": got object, want array',
            id="deployment-config-env-type",
        ),
        pytest.param(
            (ALL,),
            {"deploymentConfig": {"annotations": {"a": 1}}},
            'invalid type for field "deploymentConfig.annotations.a": got number, want string',
            id="deployment-config-annotation-value",
        ),
        pytest.param(
            (OWN,),
            {"extra": 1},
            'multiple errors found:\n  - validation failed\n  - required field "watchNamespace" is missing\n'
            '  - unknown field "extra"',
            id="several-errors",
        ),
    ],
)
def test_configuration_errors(modes: tuple[str, ...], config: Any, message: str) -> None:
    rv1 = samples.make(modes=modes)
    with pytest.raises(render.InvalidConfigurationError) as err:
        render.parse_config(rv1.csv, config, "install-ns")
    assert str(err.value) == PREFIX + message
    assert err.value.reason == "InvalidConfiguration"


def test_the_front_door_reports_configuration_errors() -> None:
    rv1 = samples.make(modes=(OWN,))
    with pytest.raises(render.InvalidConfigurationError, match='required field "watchNamespace" is missing'):
        render.manifests_for(rv1, "install-ns", None, certificate_provider=None)


def test_deployment_config_decode_error() -> None:
    rv1 = samples.make()
    config = {"deploymentConfig": {"tolerations": [{"tolerationSeconds": "soon"}]}}
    with pytest.raises(
        render.InvalidConfigurationError, match=r"^invalid deploymentConfig: failed to unmarshal"
    ):
        render.manifests_for(rv1, "install-ns", config, certificate_provider=None)


@pytest.mark.parametrize(
    ("modes", "config", "targets"),
    [
        pytest.param((ALL,), None, "", id="all-default"),
        pytest.param((ALL, OWN), {"watchNamespace": None}, "", id="all-own-null"),
        pytest.param((ALL, OWN), {"watchNamespace": "install-ns"}, "install-ns", id="all-own-own"),
        pytest.param((OWN,), {"watchNamespace": "install-ns"}, "install-ns", id="own"),
        pytest.param((SINGLE,), {"watchNamespace": "watched"}, "watched", id="single"),
        pytest.param((ALL, SINGLE), {"watchNamespace": "watched"}, "watched", id="all-single"),
        pytest.param((OWN, SINGLE), {"watchNamespace": "install-ns"}, "install-ns", id="own-single-own"),
        pytest.param((OWN, SINGLE), {"watchNamespace": "watched"}, "watched", id="own-single-other"),
    ],
)
def test_accepted_configurations(modes: tuple[str, ...], config: Any, targets: str) -> None:
    rv1 = samples.make(modes=modes)
    objects = render.manifests_for(rv1, "install-ns", config, certificate_provider=None)
    [deployment] = [o for o in objects if o["kind"] == "Deployment"]
    assert deployment["spec"]["template"]["metadata"]["annotations"]["olm.targetNamespaces"] == targets
    roles = [o for o in objects if o["kind"] == "Role"]
    assert [r["metadata"]["namespace"] for r in roles] == ([targets] if targets else [])


@pytest.mark.parametrize(
    ("modes", "targets", "message"),
    [
        pytest.param((SINGLE,), [], "exactly one target namespace must be specified", id="single-none"),
        pytest.param((MULTI,), [], "at least one target namespace must be specified", id="multi-none"),
        pytest.param(
            (OWN,),
            [""],
            "supported install modes [OwnNamespace] do not support targeting all namespaces",
            id="own-all",
        ),
        pytest.param(
            (ALL, SINGLE),
            ["install-ns"],
            "supported install modes [AllNamespaces SingleNamespace] do not support targeting own namespace",
            id="single-own",
        ),
        pytest.param(
            (OWN,),
            ["other"],
            "supported install modes [OwnNamespace] do not support target namespaces [other]",
            id="own-other",
        ),
        pytest.param(
            (SINGLE, MULTI),
            ["a", "install-ns"],
            "supported install modes [MultiNamespace SingleNamespace] do not support targeting own namespace",
            id="multi-includes-own",
        ),
        pytest.param(
            (SINGLE,),
            ["a", "b"],
            "supported install modes [SingleNamespace] do not support target namespaces [a b]",
            id="single-several",
        ),
    ],
)
def test_target_namespace_errors(modes: tuple[str, ...], targets: list[str], message: str) -> None:
    rv1 = samples.make(modes=modes)
    with pytest.raises(render.InvalidConfigurationError) as err:
        render.validate_target_namespaces(rv1.csv, "install-ns", targets)
    shown = "[" + " ".join(targets) + "]"
    assert str(err.value) == f"invalid option(s): invalid target namespaces {shown}: {message}"


def test_multi_namespace_targets_render_roles_per_namespace() -> None:
    rv1 = samples.make(modes=(MULTI, OWN))
    objects = render.render(rv1, "install-ns", target_namespaces=["a", "b", "install-ns"])
    roles = sorted(o["metadata"]["namespace"] for o in objects if o["kind"] == "Role")
    assert roles == ["a", "b", "install-ns"]
    [deployment] = [o for o in objects if o["kind"] == "Deployment"]
    assert (
        deployment["spec"]["template"]["metadata"]["annotations"]["olm.targetNamespaces"] == "a,b,install-ns"
    )


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        pytest.param(
            {"owned_api": True},
            "unsupported bundle: apiServiceDefintions are not supported",
            id="apiservices",
        ),
        pytest.param(
            {"modes": (MULTI,)},
            "unsupported bundle: bundle must support at least one of [AllNamespaces SingleNamespace "
            "OwnNamespace] "
            "install modes",
            id="multi-only",
        ),
    ],
)
def test_unsupported_bundles(mutate: dict[str, Any], message: str) -> None:
    rv1 = samples.make(modes=mutate.get("modes", (ALL,)))
    if mutate.get("owned_api"):
        raw = rv1.csv.raw
        raw["spec"]["apiservicedefinitions"] = {"owned": [{"name": "v1.example.com"}]}
        rv1 = registryv1.parse_bundle(samples.files({"csv.yaml": raw, "crd.yaml": samples.crd()}))
    with pytest.raises(render.UnsupportedBundleError) as err:
        render.manifests_for(rv1, "install-ns", None, certificate_provider=None)
    assert str(err.value) == message
