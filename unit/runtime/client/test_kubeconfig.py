"""Kubeconfig loading: merging files, choosing contexts, and each kind of user."""

from __future__ import annotations

import base64
import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from olm_runtime.client import (
    ConfigError,
    CredentialError,
    ExecCredentials,
    FileToken,
    StaticToken,
    in_cluster_config,
    load_config,
)


def _write(path: Path, doc: dict[str, Any]) -> Path:
    path.write_text(json.dumps(doc))
    return path


def _kubeconfig(
    *,
    server: str = "https://10.0.0.1:6443",
    user: dict[str, Any] | None = None,
    cluster: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": server, **(cluster or {})}}],
        "users": [{"name": "u", "user": user or {}}],
        "contexts": [{"name": "ctx", "context": {"cluster": "c", "user": "u", "namespace": "team"}}],
        "current-context": "ctx",
    }


async def test_client_certificate_files_are_relative_to_the_kubeconfig(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "config",
        _kubeconfig(
            user={"client-certificate": "pki/admin.crt", "client-key": "/abs/admin.key"},
            cluster={"certificate-authority": "pki/ca.crt", "tls-server-name": "kubernetes"},
        ),
    )
    config = await load_config(kubeconfig=path)
    assert config.server == "https://10.0.0.1:6443"
    assert config.ca_file == tmp_path / "pki" / "ca.crt"
    assert config.client_cert_file == tmp_path / "pki" / "admin.crt"
    assert config.client_key_file == Path("/abs/admin.key")
    assert config.tls_server_name == "kubernetes"
    assert config.namespace == "team"
    assert config.token_provider is None


async def test_inline_data_is_base64_decoded(tmp_path: Path) -> None:
    def b64(text: str) -> str:
        return base64.b64encode(text.encode()).decode()

    path = _write(
        tmp_path / "config",
        _kubeconfig(
            user={"client-certificate-data": b64("CERT"), "client-key-data": b64("KEY")},
            cluster={"certificate-authority-data": b64("CA")},
        ),
    )
    config = await load_config(kubeconfig=path)
    assert (config.ca_data, config.client_cert_data, config.client_key_data) == (b"CA", b"CERT", b"KEY")


async def test_token_users_and_impersonation(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "config",
        _kubeconfig(
            user={"token": "abc", "as": "jane", "as-groups": ["devs", "ops"]},
            cluster={"insecure-skip-tls-verify": True},
        ),
    )
    config = await load_config(kubeconfig=path)
    assert config.token_provider == StaticToken("abc")
    assert await config.token_provider.token() == "abc"
    assert config.impersonate_user == "jane"
    assert config.impersonate_groups == ("devs", "ops")
    assert config.insecure_skip_tls_verify


async def test_token_file_users_re_read_the_file(tmp_path: Path) -> None:
    (tmp_path / "token").write_text("first\n")
    path = _write(tmp_path / "config", _kubeconfig(user={"tokenFile": "token"}))
    config = await load_config(kubeconfig=path)
    assert isinstance(config.token_provider, FileToken)
    assert await config.token_provider.token() == "first"
    (tmp_path / "token").write_text("second")
    config.token_provider.invalidate()
    assert await config.token_provider.token() == "second"


def _plugin(
    tmp_path: Path, status: dict[str, Any], *, api_version: str = "client.authentication.k8s.io/v1"
) -> Path:
    """An exec plugin script that prints an ExecCredential and records KUBERNETES_EXEC_INFO and its args."""
    script = tmp_path / "plugin.py"
    credential = {"apiVersion": api_version, "kind": "ExecCredential", "status": status}
    script.write_text(
        "import json, os, sys\n"
        f"calls = open({str(tmp_path / 'calls')!r}, 'a')\n"
        "info = json.loads(os.environ['KUBERNETES_EXEC_INFO'])\n"
        "calls.write(json.dumps([sys.argv[1:], os.environ.get('PLUGIN_ENV'), info]) + '\\n')\n"
        f"print(json.dumps({credential!r}))\n"
    )
    return script


def _calls(tmp_path: Path) -> list[Any]:
    return [json.loads(line) for line in (tmp_path / "calls").read_text().splitlines()]


async def test_exec_plugin_tokens_are_cached_until_they_expire(tmp_path: Path) -> None:
    script = _plugin(tmp_path, {"token": "from-plugin", "expirationTimestamp": "2999-01-01T00:00:00Z"})
    user = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": sys.executable,
            "args": [str(script), "--flag"],
            "env": [{"name": "PLUGIN_ENV", "value": "set"}],
            "provideClusterInfo": True,
            "interactiveMode": "Never",
        }
    }
    path = _write(tmp_path / "config", _kubeconfig(user=user, cluster={"certificate-authority-data": "Q0E="}))
    config = await load_config(kubeconfig=path)
    assert isinstance(config.token_provider, ExecCredentials)
    assert await config.token_provider.token() == "from-plugin"
    assert await config.token_provider.token() == "from-plugin"
    calls = _calls(tmp_path)
    assert len(calls) == 1  # load_config ran it once; the token is cached until 2999
    args, env, info = calls[0]
    assert args == ["--flag"]
    assert env == "set"
    assert info["spec"]["interactive"] is False
    assert info["spec"]["cluster"] == {
        "server": "https://10.0.0.1:6443",
        "certificate-authority-data": "Q0E=",
    }


async def test_exec_plugin_runs_again_once_the_credential_expired(tmp_path: Path) -> None:
    script = _plugin(tmp_path, {"token": "t", "expirationTimestamp": "2000-01-01T00:00:00Z"})
    user = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": sys.executable,
            "args": [str(script)],
        }
    }
    config = await load_config(kubeconfig=_write(tmp_path / "config", _kubeconfig(user=user)))
    assert config.token_provider is not None
    await config.token_provider.token()
    assert len(_calls(tmp_path)) == 2


async def test_exec_plugin_client_certificates_become_the_tls_identity(tmp_path: Path) -> None:
    script = _plugin(tmp_path, {"clientCertificateData": "PEM-CERT", "clientKeyData": "PEM-KEY"})
    user = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": sys.executable,
            "args": [str(script)],
        }
    }
    config = await load_config(kubeconfig=_write(tmp_path / "config", _kubeconfig(user=user)))
    assert (config.client_cert_data, config.client_key_data) == (b"PEM-CERT", b"PEM-KEY")
    assert config.token_provider is None


@pytest.mark.parametrize(
    ("status", "api_version", "message"),
    [
        pytest.param({}, "client.authentication.k8s.io/v1", "neither a token", id="empty-status"),
        pytest.param(
            {"token": "t"}, "client.authentication.k8s.io/v1beta1", "expected", id="wrong-api-version"
        ),
        pytest.param(
            {"clientCertificateData": "c"}, "client.authentication.k8s.io/v1", "without its key", id="no-key"
        ),
    ],
)
async def test_bad_exec_plugin_output_is_a_credential_error(
    tmp_path: Path, status: dict[str, Any], api_version: str, message: str
) -> None:
    script = _plugin(tmp_path, status, api_version=api_version)
    user = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": sys.executable,
            "args": [str(script)],
        }
    }
    with pytest.raises(CredentialError, match=message):
        await load_config(kubeconfig=_write(tmp_path / "config", _kubeconfig(user=user)))


async def test_a_failing_exec_plugin_reports_its_stderr(tmp_path: Path) -> None:
    user = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": sys.executable,
            "args": ["-c", "import sys; sys.stderr.write('login required'); sys.exit(3)"],
        }
    }
    with pytest.raises(CredentialError, match="exited with 3: login required"):
        await load_config(kubeconfig=_write(tmp_path / "config", _kubeconfig(user=user)))


async def test_kubeconfig_env_lists_files_and_the_first_definition_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = _write(
        tmp_path / "a",
        {
            "clusters": [{"name": "c", "cluster": {"server": "https://first"}}],
            "users": [{"name": "u", "user": {"token": "first"}}],
            "contexts": [{"name": "ctx", "context": {"cluster": "c", "user": "u"}}],
        },
    )
    second = _write(
        tmp_path / "b",
        {
            "clusters": [
                {"name": "c", "cluster": {"server": "https://second"}},
                {"name": "other", "cluster": {"server": "https://other"}},
            ],
            "users": [{"name": "u", "user": {"token": "second"}}],
            "contexts": [{"name": "alt", "context": {"cluster": "other", "user": "u"}}],
            "current-context": "ctx",
        },
    )
    monkeypatch.setenv("KUBECONFIG", os.pathsep.join([str(first), str(tmp_path / "missing"), str(second)]))
    config = await load_config()
    assert config.server == "https://first"
    assert config.token_provider == StaticToken("first")
    alt = await load_config(context="alt")
    assert alt.server == "https://other"


@pytest.mark.parametrize(
    ("doc", "context", "message"),
    [
        pytest.param(_kubeconfig(), "nope", "context 'nope' not found", id="unknown-context"),
        pytest.param({**_kubeconfig(), "current-context": ""}, None, "no current-context", id="no-current"),
        pytest.param(_kubeconfig(server=""), None, "has no server", id="no-server"),
        pytest.param(
            _kubeconfig(user={"auth-provider": {"name": "oidc"}}),
            None,
            "auth-provider 'oidc'",
            id="auth-provider",
        ),
        pytest.param(
            _kubeconfig(user={"client-certificate": "c.crt"}), None, "without a key", id="cert-no-key"
        ),
        pytest.param(_kubeconfig(user={"username": "a", "password": "b"}), None, "basic", id="basic-auth"),
        pytest.param(
            _kubeconfig(cluster={"certificate-authority-data": "not base64!"}),
            None,
            "not valid base64",
            id="bad-b64",
        ),
    ],
)
async def test_unusable_kubeconfigs_say_why(
    tmp_path: Path, doc: dict[str, Any], context: str | None, message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        await load_config(kubeconfig=_write(tmp_path / "config", doc), context=context)


async def test_a_missing_kubeconfig_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no kubeconfig found"):
        await load_config(kubeconfig=tmp_path / "absent")


async def test_in_cluster_config_uses_the_service_account_mount(tmp_path: Path) -> None:
    (tmp_path / "token").write_text("sa-token")
    (tmp_path / "ca.crt").write_text("CA")
    (tmp_path / "namespace").write_text("olmv1-system")
    env = {"KUBERNETES_SERVICE_HOST": "fd00::1", "KUBERNETES_SERVICE_PORT": "443"}
    config = in_cluster_config(environ=env, account_dir=tmp_path)
    assert config.server == "https://[fd00::1]:443"
    assert config.ca_file == tmp_path / "ca.crt"
    assert config.namespace == "olmv1-system"
    assert config.token_provider is not None
    assert await config.token_provider.token() == "sa-token"


def test_outside_a_cluster_in_cluster_config_fails(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not running in a cluster"):
        in_cluster_config(environ={}, account_dir=tmp_path)
    with pytest.raises(ConfigError, match="does not exist"):
        in_cluster_config(
            environ={"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443"},
            account_dir=tmp_path,
        )
