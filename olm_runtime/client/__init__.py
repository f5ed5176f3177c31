"""A Kubernetes API client for asyncio that reads and writes plain dicts.

The pieces, bottom up:

- `load_config()` -> `RestConfig`: server, trust and identity from a kubeconfig (certificates,
  tokens, token files, exec plugins) or from the Pod's ServiceAccount.
- `Transport`: HTTP on aiohttp with one connection pool per TLS identity, a separate connection budget
  for watches, bearer tokens fetched per request (so rotation works), typed errors and
  `rest_client_requests_total`.
- `RESTMapper`: kind <-> resource from discovery, cached, refreshed when a kind is missing.
- `Client`: get, list (paged), watch, create, update, patch (merge, JSON, strategic), server-side
  apply, delete (propagation, preconditions), status and other subresources, dry-run; bodies parsed
  with orjson into dicts.
- Identities: `client.impersonating(user, groups)` and `client.for_service_account(ns, name)` share
  the parent's connections.

Promises: every non-2xx response raises a subclass of `errors.APIError` carrying the server's
message; reads throttled with 429 are retried after Retry-After (bounded), writes are never retried;
nothing is cached except discovery and tokens. Not promised: reconnecting watches (the cache's
reflector owns that) or client-side rate limiting (the server's priority and fairness does it).

    async with await Client.connect(field_manager="my-controller") as client:
        cm = await client.get(kinds.CONFIG_MAP, "settings", namespace="default")
"""

from olm_runtime.client import errors, kinds
from olm_runtime.client.auth import (
    CredentialError,
    ExecCredentials,
    ExecPlugin,
    FileToken,
    StaticToken,
    TokenProvider,
)
from olm_runtime.client.client import Client
from olm_runtime.client.config import ConfigError, RestConfig, in_cluster_config, load_config
from olm_runtime.client.gvk import GroupVersionKind, GroupVersionResource, ResourceInfo
from olm_runtime.client.options import ObjectList, PatchType, Preconditions, PropagationPolicy, WatchEvent
from olm_runtime.client.restmapper import NoKindMatch, RESTMapper
from olm_runtime.client.transport import Transport

__all__ = [
    "Client",
    "ConfigError",
    "CredentialError",
    "ExecCredentials",
    "ExecPlugin",
    "FileToken",
    "GroupVersionKind",
    "GroupVersionResource",
    "NoKindMatch",
    "ObjectList",
    "PatchType",
    "Preconditions",
    "PropagationPolicy",
    "RESTMapper",
    "ResourceInfo",
    "RestConfig",
    "StaticToken",
    "TokenProvider",
    "Transport",
    "WatchEvent",
    "errors",
    "in_cluster_config",
    "kinds",
    "load_config",
]
