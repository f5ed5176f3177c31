"""ServiceAccount tokens from the TokenRequest API, cached and renewed before they expire."""

from __future__ import annotations

import asyncio
import time
from datetime import datetime

import orjson

from olm_runtime import clock as clocks
from olm_runtime.client import errors
from olm_runtime.client.auth import CredentialError, WallClock
from olm_runtime.client.transport import Requester

REFRESH_FRACTION = 0.8
"""A token is renewed after this fraction of its lifetime, like the kubelet does for projected tokens."""


class ServiceAccountToken:
    """A `TokenProvider` issuing tokens for one ServiceAccount through `serviceaccounts/<name>/token`.

    Tokens are requested through `transport` (whose identity needs `create` on
    `serviceaccounts/token`), reused until `REFRESH_FRACTION` of their lifetime has passed, and
    requested once for all concurrent callers.
    """

    def __init__(
        self,
        transport: Requester,
        namespace: str,
        name: str,
        *,
        audiences: tuple[str, ...] = (),
        expiration_seconds: int = 3600,
        clock: clocks.Clock = clocks.REAL,
        wall_clock: WallClock = time.time,
    ) -> None:
        self.namespace = namespace
        self.name = name
        self._transport = transport
        self._audiences = audiences
        self._expiration_seconds = expiration_seconds
        self._clock = clock
        self._wall_clock = wall_clock
        self._token: str | None = None
        self._renew_at = 0.0
        self._lock = asyncio.Lock()

    def __repr__(self) -> str:
        return f"ServiceAccountToken({self.namespace}/{self.name})"

    async def token(self) -> str:
        if self._token is not None and self._clock.now() < self._renew_at:
            return self._token
        async with self._lock:
            if self._token is None or self._clock.now() >= self._renew_at:
                self._token, self._renew_at = await self._request()
            return self._token

    def invalidate(self) -> None:
        self._token = None

    async def _request(self) -> tuple[str, float]:
        spec: dict[str, object] = {"expirationSeconds": self._expiration_seconds}
        if self._audiences:
            spec["audiences"] = list(self._audiences)
        body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec}
        path = f"/api/v1/namespaces/{self.namespace}/serviceaccounts/{self.name}/token"
        started = self._clock.now()
        try:
            data = await self._transport.request(
                "POST", path, body=orjson.dumps(body), content_type="application/json"
            )
        except errors.APIError as e:
            raise CredentialError(
                f"cannot get a token for ServiceAccount {self.namespace}/{self.name}: {e.message}"
            ) from e
        status = orjson.loads(data).get("status") or {}
        token, expiry = status.get("token"), status.get("expirationTimestamp")
        if not token or not expiry:
            raise CredentialError(f"TokenRequest for {self.namespace}/{self.name} returned no token")
        expires = datetime.fromisoformat(str(expiry).replace("Z", "+00:00")).timestamp()
        lifetime = max(expires - self._wall_clock(), 0.0)
        return str(token), started + REFRESH_FRACTION * lifetime


class IdentityCache:
    """One token provider per ServiceAccount (and audiences, lifetime), shared by the clients derived
    from one root client; tokens are requested with the root client's identity."""

    def __init__(self, transport: Requester) -> None:
        self._transport = transport
        self._providers: dict[tuple[str, str, tuple[str, ...], int], ServiceAccountToken] = {}

    def service_account(
        self, namespace: str, name: str, *, audiences: tuple[str, ...], expiration_seconds: int
    ) -> ServiceAccountToken:
        key = (namespace, name, audiences, expiration_seconds)
        provider = self._providers.get(key)
        if provider is None:
            provider = self._providers[key] = ServiceAccountToken(
                self._transport, namespace, name, audiences=audiences, expiration_seconds=expiration_seconds
            )
        return provider
