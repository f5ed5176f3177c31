"""Where `load_config` looks, in the order docs/runtime/client.md gives, and how merged files resolve."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from olm_runtime.client import ConfigError, StaticToken, load_config


def kubeconfig(path: Path, server: str, *, token: str = "t", current: str | None = "ctx") -> Path:
    doc: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": server}}],
        "users": [{"name": "u", "user": {"token": token}}],
        "contexts": [{"name": "ctx", "context": {"cluster": "c", "user": "u"}}],
    }
    if current is not None:
        doc["current-context"] = current
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))
    return path


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty home directory and no $KUBECONFIG."""
    directory = tmp_path / "home"
    directory.mkdir()
    monkeypatch.setenv("HOME", str(directory))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_PORT", raising=False)
    return directory


async def test_the_kubeconfig_argument_comes_before_kubeconfig_env_and_home(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kubeconfig(home / ".kube" / "config", "https://home")
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig(tmp_path / "env", "https://env")))
    explicit = kubeconfig(tmp_path / "explicit", "https://explicit")
    assert (await load_config(kubeconfig=explicit)).server == "https://explicit"
    assert (await load_config()).server == "https://env"


async def test_without_kubeconfig_env_the_home_kube_config_is_read(home: Path) -> None:
    kubeconfig(home / ".kube" / "config", "https://home", token="from-home")
    config = await load_config()
    assert config.server == "https://home"
    assert config.token_provider == StaticToken("from-home")


async def test_without_any_kubeconfig_the_in_cluster_configuration_is_tried(home: Path) -> None:
    with pytest.raises(ConfigError, match="not running in a cluster"):
        await load_config()
    with pytest.raises(ConfigError, match="context 'staging' requested but no kubeconfig"):
        await load_config(context="staging")


async def test_of_merged_files_the_first_current_context_wins(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    no_current = kubeconfig(tmp_path / "a", "https://a", current=None)
    second = tmp_path / "b"
    second.write_text(
        json.dumps(
            {
                "clusters": [{"name": "b", "cluster": {"server": "https://b"}}],
                "users": [{"name": "b", "user": {"token": "b"}}],
                "contexts": [{"name": "b", "context": {"cluster": "b", "user": "b"}}],
                "current-context": "b",
            }
        )
    )
    third = kubeconfig(tmp_path / "c", "https://c")
    monkeypatch.setenv("KUBECONFIG", os.pathsep.join(map(str, (no_current, second, third))))
    assert (await load_config()).server == "https://b"


async def test_relative_paths_resolve_against_the_file_that_defines_the_entry(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clusters = tmp_path / "clusters" / "config"
    users = tmp_path / "users" / "config"
    clusters.parent.mkdir()
    users.parent.mkdir()
    clusters.write_text(
        json.dumps(
            {
                "clusters": [
                    {"name": "c", "cluster": {"server": "https://x", "certificate-authority": "ca.crt"}}
                ],
                "contexts": [{"name": "ctx", "context": {"cluster": "c", "user": "u", "namespace": "team"}}],
                "current-context": "ctx",
            }
        )
    )
    users.write_text(
        json.dumps(
            {"users": [{"name": "u", "user": {"client-certificate": "me.crt", "client-key": "keys/me.key"}}]}
        )
    )
    monkeypatch.setenv("KUBECONFIG", os.pathsep.join([str(clusters), str(users)]))
    config = await load_config()
    assert config.ca_file == clusters.parent / "ca.crt"
    assert (config.client_cert_file, config.client_key_file) == (
        users.parent / "me.crt",
        users.parent / "keys" / "me.key",
    )
    assert config.namespace == "team", "the context's namespace is reported, for information"


async def test_a_context_can_be_chosen_over_the_current_one(home: Path, tmp_path: Path) -> None:
    path = tmp_path / "config"
    path.write_text(
        json.dumps(
            {
                "clusters": [
                    {"name": "prod", "cluster": {"server": "https://prod"}},
                    {"name": "dev", "cluster": {"server": "https://dev"}},
                ],
                "users": [{"name": "u", "user": {"token": "t"}}],
                "contexts": [
                    {"name": "prod", "context": {"cluster": "prod", "user": "u"}},
                    {"name": "dev", "context": {"cluster": "dev", "user": "u"}},
                ],
                "current-context": "prod",
            }
        )
    )
    assert (await load_config(kubeconfig=path)).server == "https://prod"
    assert (await load_config(kubeconfig=path, context="dev")).server == "https://dev"
