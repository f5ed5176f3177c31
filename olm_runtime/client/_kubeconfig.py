"""Kubeconfig files: merge several, pick a context, resolve its cluster and user.

Relative file paths in an entry are relative to the file that defined the entry, as kubectl does.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from olm_runtime.client.auth import ExecCredentials, ExecPlugin, FileToken, StaticToken, TokenProvider

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class ConfigError(Exception):
    """The client configuration is missing or cannot be used."""


@dataclass
class _Entry:
    body: Mapping[str, Any]
    origin: Path
    """Directory of the file the entry came from."""


@dataclass
class Merged:
    """Several kubeconfig files merged: the first definition of each name wins."""

    clusters: dict[str, _Entry] = field(default_factory=dict)
    users: dict[str, _Entry] = field(default_factory=dict)
    contexts: dict[str, _Entry] = field(default_factory=dict)
    current_context: str = ""
    sources: list[Path] = field(default_factory=list)


@dataclass(frozen=True)
class Resolved:
    """The parts of one context that the client needs."""

    server: str
    ca_file: Path | None = None
    ca_data: bytes | None = None
    insecure: bool = False
    tls_server_name: str | None = None
    proxy_url: str | None = None
    client_cert_file: Path | None = None
    client_key_file: Path | None = None
    client_cert_data: bytes | None = None
    client_key_data: bytes | None = None
    token_provider: TokenProvider | None = None
    impersonate_user: str | None = None
    impersonate_groups: tuple[str, ...] = ()
    namespace: str | None = None


def _named(section: Any, what: str, source: Path) -> Iterable[tuple[str, Mapping[str, Any]]]:
    for item in section or ():
        if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
            raise ConfigError(f"{source}: a {what} entry has no name")
        body = item.get(what)
        yield item["name"], body if isinstance(body, Mapping) else {}


def merge(documents: Iterable[tuple[Path, Mapping[str, Any]]]) -> Merged:
    """Merge parsed kubeconfig documents given with the path each was read from."""
    merged = Merged()
    for path, doc in documents:
        merged.sources.append(path)
        origin = path.parent
        for section, target in (
            ("clusters", merged.clusters),
            ("users", merged.users),
            ("contexts", merged.contexts),
        ):
            for name, body in _named(doc.get(section), section[:-1], path):
                target.setdefault(name, _Entry(body, origin))
        if not merged.current_context and doc.get("current-context"):
            merged.current_context = str(doc["current-context"])
    return merged


def load_files(paths: Iterable[Path]) -> Merged:
    """Read and merge kubeconfig files; files that do not exist are skipped, as kubectl does."""
    documents: list[tuple[Path, Mapping[str, Any]]] = []
    for path in paths:
        try:
            text = path.read_text()
        except FileNotFoundError:
            continue
        except OSError as e:
            raise ConfigError(f"cannot read kubeconfig {path}: {e}") from e
        try:
            doc = yaml.load(text, Loader=_Loader) or {}
        except yaml.YAMLError as e:
            raise ConfigError(f"kubeconfig {path} is not valid YAML: {e}") from e
        if not isinstance(doc, Mapping):
            raise ConfigError(f"kubeconfig {path} is not a mapping")
        documents.append((path, doc))
    if not documents:
        raise ConfigError(f"no kubeconfig found at {', '.join(str(p) for p in paths) or '(none)'}")
    return merge(documents)


def _path(entry: _Entry, key: str) -> Path | None:
    value = entry.body.get(key)
    if not value:
        return None
    path = Path(str(value)).expanduser()
    return path if path.is_absolute() else entry.origin / path


def _data(entry: _Entry, key: str) -> bytes | None:
    value = entry.body.get(key)
    if not value:
        return None
    try:
        return base64.b64decode(str(value), validate=True)
    except (binascii.Error, ValueError) as e:
        raise ConfigError(f"{key} is not valid base64") from e


def _exec_plugin(entry: _Entry, cluster: _Entry, server: str) -> ExecPlugin:
    spec = entry.body["exec"]
    if not isinstance(spec, Mapping) or not spec.get("command"):
        raise ConfigError("user.exec needs a command")
    command = str(spec["command"])
    if "/" in command and not Path(command).is_absolute():
        command = str(entry.origin / command)  # a relative path names a file beside the kubeconfig
    cluster_info: dict[str, Any] | None = None
    if spec.get("provideClusterInfo"):
        cluster_info = {"server": server}
        for key in ("certificate-authority-data", "insecure-skip-tls-verify", "tls-server-name", "proxy-url"):
            if cluster.body.get(key):
                cluster_info[key] = cluster.body[key]
        if not cluster_info.get("certificate-authority-data") and (
            ca := _path(cluster, "certificate-authority")
        ):
            cluster_info["certificate-authority-data"] = base64.b64encode(ca.read_bytes()).decode()
        extensions = cluster.body.get("extensions") or ()
        for extension in extensions:
            if (
                isinstance(extension, Mapping)
                and extension.get("name") == "client.authentication.k8s.io/exec"
            ):
                cluster_info["config"] = extension.get("extension")
    env = {str(e["name"]): str(e.get("value", "")) for e in spec.get("env") or () if isinstance(e, Mapping)}
    return ExecPlugin(
        command=command,
        args=tuple(str(a) for a in spec.get("args") or ()),
        env=env,
        api_version=str(spec.get("apiVersion") or "client.authentication.k8s.io/v1"),
        install_hint=str(spec.get("installHint") or ""),
        cluster=cluster_info,
    )


def _token_provider(user: _Entry, cluster: _Entry, server: str) -> TokenProvider | None:
    body = user.body
    if body.get("auth-provider"):
        name = body["auth-provider"].get("name", "?") if isinstance(body["auth-provider"], Mapping) else "?"
        raise ConfigError(f"auth-provider {name!r} is not supported; use an exec credential plugin")
    if body.get("username") or body.get("password"):
        raise ConfigError("basic authentication (username/password) is not supported by the API server")
    if body.get("token"):
        return StaticToken(str(body["token"]))
    if token_file := _path(user, "tokenFile"):
        return FileToken(token_file)
    if body.get("exec"):
        return ExecCredentials(_exec_plugin(user, cluster, server))
    return None


def resolve(merged: Merged, context: str | None = None) -> Resolved:
    """Resolve a context (the current one by default) to a server, trust and identity."""
    name = context or merged.current_context
    sources = ", ".join(str(p) for p in merged.sources)
    if not name:
        raise ConfigError(f"no current-context in {sources}; pass a context")
    ctx = merged.contexts.get(name)
    if ctx is None:
        raise ConfigError(f"context {name!r} not found in {sources}")
    cluster_name, user_name = str(ctx.body.get("cluster") or ""), str(ctx.body.get("user") or "")
    cluster = merged.clusters.get(cluster_name)
    if cluster is None:
        raise ConfigError(f"context {name!r} names cluster {cluster_name!r}, which is not defined")
    user = merged.users.get(user_name) if user_name else _Entry({}, cluster.origin)
    if user is None:
        raise ConfigError(f"context {name!r} names user {user_name!r}, which is not defined")
    server = str(cluster.body.get("server") or "")
    if not server:
        raise ConfigError(f"cluster {cluster_name!r} has no server")
    cert_file, key_file = _path(user, "client-certificate"), _path(user, "client-key")
    cert_data, key_data = _data(user, "client-certificate-data"), _data(user, "client-key-data")
    if bool(cert_file or cert_data) != bool(key_file or key_data):
        raise ConfigError(f"user {user_name!r} has a client certificate without a key (or the reverse)")
    groups = user.body.get("as-groups") or ()
    return Resolved(
        server=server,
        ca_file=_path(cluster, "certificate-authority"),
        ca_data=_data(cluster, "certificate-authority-data"),
        insecure=bool(cluster.body.get("insecure-skip-tls-verify")),
        tls_server_name=str(cluster.body["tls-server-name"]) if cluster.body.get("tls-server-name") else None,
        proxy_url=str(cluster.body["proxy-url"]) if cluster.body.get("proxy-url") else None,
        client_cert_file=cert_file,
        client_key_file=key_file,
        client_cert_data=cert_data,
        client_key_data=key_data,
        token_provider=_token_provider(user, cluster, server),
        impersonate_user=str(user.body["as"]) if user.body.get("as") else None,
        impersonate_groups=tuple(str(g) for g in groups),
        namespace=str(ctx.body["namespace"]) if ctx.body.get("namespace") else None,
    )
