"""`--tls-profile` and `--tls-custom-*` as both processes read them, and the refusals at start:
each process run as its own command with a bad `--feature-gates` or a TLS setting the runtime
cannot honour exits 2 with the message, before it connects to anything."""

from __future__ import annotations

import argparse
import ssl
import subprocess
import sys

import pytest

from olm.catalogd import main as catalogd
from olm.operator_controller import main as operator_controller
from olm.process import flags
from olm_runtime.manager import tlsprofile

CATALOGD_REQUIRED = ["--tls-cert", "c.crt", "--tls-key", "c.key"]


def _catalogd(*argv: str) -> argparse.Namespace:
    return flags.parse(catalogd.parser(), [*CATALOGD_REQUIRED, *argv])


@pytest.mark.parametrize(
    ("argv", "profile"),
    [
        pytest.param([], tlsprofile.INTERMEDIATE, id="default-intermediate"),
        pytest.param(["--tls-profile=modern"], tlsprofile.MODERN, id="any-case"),
        pytest.param(["--tls-profile", "Old"], tlsprofile.OLD, id="old"),
        pytest.param(
            ["--tls-profile=Intermediate", "--tls-custom-curves=X25519,prime256v1"],
            tlsprofile.INTERMEDIATE,
            id="custom-flags-count-only-with-custom",
        ),
    ],
)
def test_predefined_profiles(argv: list[str], profile: tlsprofile.Profile) -> None:
    assert _catalogd(*argv).tls is profile


def test_a_custom_profile_takes_the_custom_flags() -> None:
    args = _catalogd(
        "--tls-profile=custom",
        "--tls-custom-version=TLSv1.3",
        "--tls-custom-ciphers=TLS_AES_128_GCM_SHA256,TLS_AES_256_GCM_SHA384,TLS_CHACHA20_POLY1305_SHA256",
        "--tls-custom-curves=secp256r1",
    )
    assert args.tls == tlsprofile.Profile(
        name="Custom",
        minimum_version=ssl.TLSVersion.TLSv1_3,
        ciphers=tlsprofile.TLS13_CIPHERS,
        curves=("secp256r1",),
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        pytest.param(["--tls-profile=strict"], 'unknown TLS profile: "strict"', id="profile"),
        pytest.param(["--tls-custom-version=1.2"], 'unknown TLS version: "1.2"', id="version"),
        pytest.param(
            ["--tls-custom-ciphers=ECDHE-RSA-AES128-GCM-SHA256"],
            'unknown cipher "ECDHE-RSA-AES128',
            id="openssl-name",
        ),
        pytest.param(["--tls-custom-curves=P-256"], 'unknown curve "P-256"', id="curve"),
        pytest.param(
            ["--tls-profile=custom", "--tls-custom-curves=X25519,prime256v1"],
            "argument --tls-profile: TLS profile Custom: Python's ssl module can restrict key exchange",
            id="two-curves",
        ),
        pytest.param(
            ["--tls-profile=custom", "--tls-custom-ciphers=TLS_AES_128_GCM_SHA256"],
            "TLS 1.3 cipher suites cannot be selected",
            id="tls13-subset",
        ),
        pytest.param(
            ["--feature-gates=GraphQLCatalogQueries=true"],
            "argument --feature-gates: cannot set feature gate GraphQLCatalogQueries to true",
            id="gate",
        ),
    ],
)
def test_refusals_exit_2_with_the_message(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        _catalogd(*argv)
    assert exited.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    ("module", "argv", "message"),
    [
        pytest.param(
            "olm.catalogd.main",
            [*CATALOGD_REQUIRED, "--feature-gates=APIV1MetasHandler=false"],
            "catalogd: error: argument --feature-gates: cannot set feature gate APIV1MetasHandler to false, "
            "feature is locked to true here: /api/v1/metas is always served",
            id="catalogd-gate",
        ),
        pytest.param(
            "olm.catalogd.main",
            [*CATALOGD_REQUIRED, "--tls-profile=Custom", "--tls-custom-curves=X25519MLKEM768"],
            "catalogd: error: argument --tls-profile: TLS profile Custom: curve X25519MLKEM768 is a post",
            id="catalogd-post-quantum",
        ),
        pytest.param(
            "olm.operator_controller.main",
            ["--feature-gates=Nope=true"],
            "operator-controller: error: argument --feature-gates: unrecognized feature gate: Nope",
            id="operator-controller-unknown-gate",
        ),
        pytest.param(
            "olm.operator_controller.main",
            ["--feature-gates=BoxcutterRuntime=false"],
            "operator-controller: error: argument --feature-gates: cannot set feature gate BoxcutterRuntime "
            "to false, feature is locked to true here",
            id="operator-controller-gate",
        ),
        pytest.param(
            "olm.operator_controller.main",
            ["--tls-profile=custom", "--tls-custom-ciphers=TLS_AES_128_GCM_SHA256,TLS_AES_256_GCM_SHA384"],
            "operator-controller: error: argument --tls-profile: TLS profile Custom: TLS 1.3 cipher suites",
            id="operator-controller-tls13-subset",
        ),
    ],
)
def test_each_process_refuses_at_start(module: str, argv: list[str], message: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", module, *argv],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={"KUBECONFIG": "/nonexistent", "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 2, result.stderr
    assert message in result.stderr
    assert "startup." not in result.stderr  # refused before it looked for an API server


def test_operator_controller_takes_the_same_tls_flags() -> None:
    args = flags.parse(operator_controller.parser(), ["--tls-profile=MODERN"])
    assert args.tls is tlsprofile.MODERN
    assert args.features["WebhookProviderCertManager"] is True
