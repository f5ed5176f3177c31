"""Where the API server is and how to authenticate to it.

`load_config()` finds the configuration the way kubectl users expect: an explicit kubeconfig path,
then `$KUBECONFIG` (a list of files, merged), then `~/.kube/config`, then the in-cluster
ServiceAccount. Kubeconfig files are parsed here (certificate, token, token file and exec-plugin
users; legacy `auth-provider` users are not supported), which keeps kubernetes-asyncio's generated
models out of the process.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from olm_runtime.client import _kubeconfig
from olm_runtime.client.auth import ExecCredentials, FileToken, TokenProvider

__all__ = ["ConfigError", "RestConfig", "in_cluster_config", "load_config"]

SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")

ConfigError = _kubeconfig.ConfigError


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
    user = _kubeconfig.resolve(_kubeconfig.load_files(paths), context)
    config = RestConfig(
        server=user.server,
        ca_file=user.ca_file,
        ca_data=user.ca_data,
        insecure_skip_tls_verify=user.insecure,
        tls_server_name=user.tls_server_name,
        client_cert_file=user.client_cert_file,
        client_key_file=user.client_key_file,
        client_cert_data=user.client_cert_data,
        client_key_data=user.client_key_data,
        token_provider=user.token_provider,
        impersonate_user=user.impersonate_user,
        impersonate_groups=user.impersonate_groups,
        namespace=user.namespace,
        proxy_url=user.proxy_url,
    )
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
