"""Where the API server is and how to authenticate to it.

`load_config()` finds the configuration the way kubectl users expect: an explicit kubeconfig path,
then `$KUBECONFIG` (a list of files, merged), then `~/.kube/config`, then the in-cluster
ServiceAccount. Kubeconfig files are parsed here (certificate, token, token file and exec-plugin
users; legacy `auth-provider` users are not supported), which keeps kubernetes-asyncio's generated
models out of the process.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from olm_runtime.client.auth import ExecCredentials, ExecPlugin, FileToken, StaticToken, TokenProvider

__all__ = ["ConfigError", "RestConfig", "in_cluster_config", "load_config"]

SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")


class ConfigError(Exception):
    """The client configuration is missing or cannot be used."""


@dataclass(frozen=True, kw_only=True)
class RestConfig:
    """How to reach one API server as one identity. Build it with `load_config()` or directly."""

    server: str
    """Base URL, e.g. `https://127.0.0.1:6443` (a path prefix is kept)."""
    ca_file: Path | None = None
    """PEM bundle of the CAs that may sign the server's certificate."""
    ca_data: bytes | None = None
    """The same as PEM bytes; used together with `ca_file` when both are set."""
    insecure_skip_tls_verify: bool = False
    """Do not verify the server's certificate (tests against throwaway clusters only)."""
    tls_server_name: str | None = None
    """Name to verify the server's certificate against, when it differs from the URL's host."""
    client_cert_file: Path | None = None
    """Client certificate (PEM) for mutual-TLS authentication, with `client_key_file`."""
    client_key_file: Path | None = None
    client_cert_data: bytes | None = None
    """Client certificate as PEM bytes, with `client_key_data` (used when no file is set)."""
    client_key_data: bytes | None = None
    token_provider: TokenProvider | None = None
    """Source of the bearer token, asked on every request so rotated tokens are used."""
    impersonate_user: str | None = None
    """Act as this user (`Impersonate-User`); the authenticated identity needs `impersonate` rights."""
    impersonate_groups: tuple[str, ...] = ()
    """Groups for the impersonated user (`Impersonate-Group`, one header each)."""
    namespace: str | None = None
    """The context's (or in-cluster Pod's) namespace; informational, never applied implicitly."""
    proxy_url: str | None = None
    """HTTP proxy to tunnel through (a kubeconfig cluster's `proxy-url`)."""
    timeout: float = 60.0
    """Default total timeout of one request in seconds (watches use their own, see `Transport.stream`)."""
    connect_timeout: float = 10.0
    """Timeout for establishing a connection (TCP and TLS) in seconds."""
    user_agent: str = "olm-runtime"
    max_connections: int = 100
    """Connections for ordinary requests; watches never take from this pool."""
    max_watch_connections: int = 0
    """Connections for watches (HTTP/1.1 needs one per open watch); 0 means no limit."""
    throttle_retries: int = 3
    """How often a read (GET) answered with 429 Too Many Requests is retried after Retry-After."""

    def with_identity(
        self,
        *,
        token_provider: TokenProvider | None = None,
        impersonate_user: str | None = None,
        impersonate_groups: tuple[str, ...] = (),
    ) -> RestConfig:
        """The same server and trust, with only the given identity (client certificates dropped)."""
        return dataclasses.replace(
            self,
            client_cert_file=None,
            client_key_file=None,
            client_cert_data=None,
            client_key_data=None,
            token_provider=token_provider,
            impersonate_user=impersonate_user,
            impersonate_groups=impersonate_groups,
        )


def in_cluster_config(
    *, environ: Mapping[str, str] | None = None, account_dir: Path = SERVICE_ACCOUNT_DIR
) -> RestConfig:
    """The configuration of a Pod: the `kubernetes` Service and the mounted ServiceAccount token."""
    env = os.environ if environ is None else environ
    host, port = env.get("KUBERNETES_SERVICE_HOST"), env.get("KUBERNETES_SERVICE_PORT")
    if not host or not port:
        raise ConfigError("not running in a cluster: KUBERNETES_SERVICE_HOST/PORT are not set")
    token_file = account_dir / "token"
    if not token_file.is_file():
        raise ConfigError(f"not running in a cluster: {token_file} does not exist")
    namespace_file = account_dir / "namespace"
    host = f"[{host}]" if ":" in host else host
    return RestConfig(
        server=f"https://{host}:{port}",
        ca_file=account_dir / "ca.crt",
        token_provider=FileToken(token_file),
        namespace=namespace_file.read_text().strip() if namespace_file.is_file() else None,
    )


async def load_config(*, kubeconfig: str | Path | None = None, context: str | None = None) -> RestConfig:
    """Find and load the client configuration.

    Order: `kubeconfig` when given; else the files in `$KUBECONFIG` (merged, the first file setting a
    name or the current context wins); else `~/.kube/config` when it exists; else in-cluster.
    `context` selects a kubeconfig context other than the current one. An exec plugin is run once
    here so that a plugin issuing client certificates works (those are not renewed afterwards).
    """
    if kubeconfig is not None:
        paths = [Path(kubeconfig)]
    elif os.environ.get("KUBECONFIG"):
        paths = [Path(p) for p in os.environ["KUBECONFIG"].split(os.pathsep) if p]
    elif (default := Path.home() / ".kube" / "config").is_file():
        paths = [default]
    else:
        if context is not None:
            raise ConfigError(f"context {context!r} requested but no kubeconfig was found")
        return in_cluster_config()
    config = _resolve(_load_files(paths), context)
    if isinstance(config.token_provider, ExecCredentials):
        result = await config.token_provider.credentials()
        if result.client_certificate_data and result.client_key_data:
            config = dataclasses.replace(
                config,
                client_cert_data=result.client_certificate_data.encode(),
                client_key_data=result.client_key_data.encode(),
                token_provider=config.token_provider if result.token else None,
            )
    return config


# Kubeconfig files: merged, a context picked, its cluster and user resolved. Relative file paths in an
# entry are relative to the file that defined the entry, as kubectl does.


@dataclass
class _Entry:
    body: Mapping[str, Any]
    origin: Path
    """Directory of the file the entry came from."""


@dataclass
class _Merged:
    """Several kubeconfig files merged: the first definition of each name wins."""

    clusters: dict[str, _Entry] = field(default_factory=dict)
    users: dict[str, _Entry] = field(default_factory=dict)
    contexts: dict[str, _Entry] = field(default_factory=dict)
    current_context: str = ""
    sources: list[Path] = field(default_factory=list)


def _named(section: Any, what: str, source: Path) -> Iterable[tuple[str, Mapping[str, Any]]]:
    for item in section or ():
        if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
            raise ConfigError(f"{source}: a {what} entry has no name")
        body = item.get(what)
        yield item["name"], body if isinstance(body, Mapping) else {}


def _merge(documents: Iterable[tuple[Path, Mapping[str, Any]]]) -> _Merged:
    """Merge parsed kubeconfig documents given with the path each was read from."""
    merged = _Merged()
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


def _load_files(paths: Iterable[Path]) -> _Merged:
    """Read and merge kubeconfig files; files that do not exist are skipped, as kubectl does."""
    # Imported here: a controller in a Pod uses the in-cluster config and never parses YAML.
    import yaml  # noqa: PLC0415

    loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    documents: list[tuple[Path, Mapping[str, Any]]] = []
    for path in paths:
        try:
            text = path.read_text()
        except FileNotFoundError:
            continue
        except OSError as e:
            raise ConfigError(f"cannot read kubeconfig {path}: {e}") from e
        try:
            doc = yaml.load(text, Loader=loader) or {}
        except yaml.YAMLError as e:
            raise ConfigError(f"kubeconfig {path} is not valid YAML: {e}") from e
        if not isinstance(doc, Mapping):
            raise ConfigError(f"kubeconfig {path} is not a mapping")
        documents.append((path, doc))
    if not documents:
        raise ConfigError(f"no kubeconfig found at {', '.join(str(p) for p in paths) or '(none)'}")
    return _merge(documents)


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


def _resolve(merged: _Merged, context: str | None = None) -> RestConfig:
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
    return RestConfig(
        server=server,
        ca_file=_path(cluster, "certificate-authority"),
        ca_data=_data(cluster, "certificate-authority-data"),
        insecure_skip_tls_verify=bool(cluster.body.get("insecure-skip-tls-verify")),
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
