"""Requests to a registry's `/v2/` API: authentication, retries, and errors mapped to types.

Authentication follows the distribution token flow: a request goes out with whatever
`Authorization` is known for its host and repository; a 401 carries a `WWW-Authenticate`
challenge, answered with Basic credentials from the keychain or with a bearer token fetched from
the challenge's realm (anonymously when the keychain has nothing), and the request is sent once
more. Tokens are cached until shortly before they expire, and forgotten when the keychain is
replaced (`use_keychain`: a changed pull secret), so the next request authenticates afresh.

Every request, token requests included, is sent with the `TrustStore`'s current SSL context: a
changed CA bundle is used by the next connection, without a new session. It goes through the proxy
`Proxies` chooses for its URL (`HTTPS_PROXY`, `NO_PROXY`); TLS to an `https://` proxy, and to a
TLS-intercepting one, is checked against the same `TrustStore`. A proxy that refuses is a transient
failure whose message names the proxy.
"""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

import aiohttp
import orjson
from opentelemetry import trace

from olm.compat import httpproxy
from olm.oci._auth import Challenge, Credentials, Keychain, parse_challenges
from olm.oci._errors import (
    NotFound,
    ProtocolError,
    RegistryError,
    TLSVerificationFailed,
    TransientError,
    Unauthorized,
)
from olm.oci._proxy import proxy_failure, tls_peer
from olm.oci._reference import Reference
from olm.oci._retry import TRANSIENT_STATUSES, RetryPolicy
from olm.oci._trust import TrustStore

T = TypeVar("T")
# The OpenTelemetry API directly, not olm_runtime's helpers: this package stays free of the runtime.
_TRACER = trace.get_tracer("olm.oci")
_TOKEN_MARGIN = 10.0
_DEFAULT_TOKEN_LIFETIME = 60.0


@dataclass(slots=True)
class Statistics:
    """Counters of what the client did; tests and metrics read them."""

    manifest_requests: int = 0
    blob_requests: int = 0
    token_requests: int = 0
    retries: int = 0
    bytes_downloaded: int = 0
    blob_cache_hits: int = 0


class _Retry(Exception):
    def __init__(self, reason: str) -> None:
        self.reason = reason


class Transport:
    """Sends authenticated requests to registries through one aiohttp session."""

    def __init__(
        self,
        session: aiohttp.ClientSession,
        keychain: Keychain,
        retry: RetryPolicy,
        trust: TrustStore,
        proxies: httpproxy.Proxies = httpproxy.Proxies(),  # noqa: B008 - frozen, shared safely
    ) -> None:
        self._session = session
        self._proxies = proxies
        self._keychain = keychain
        self._retry = retry
        self._trust = trust
        self._authorization: dict[tuple[str, str], tuple[str, float]] = {}
        self.statistics = Statistics()

    def use_keychain(self, keychain: Keychain) -> None:
        """Authenticate with `keychain` from now on; what the old one logged in to is forgotten."""
        if keychain != self._keychain:
            self._keychain = keychain
            self._authorization.clear()

    async def call(
        self,
        method: str,
        reference: Reference,
        path: str,
        what: str,
        handle: Callable[[aiohttp.ClientResponse], Awaitable[T]],
        *,
        headers: dict[str, str] | None = None,
    ) -> T:
        """Send `method path` for `reference`, retrying transient failures, and `handle` a 2xx answer.

        `handle` runs inside the retry loop: a connection dropped while it reads the body is
        retried like a failed request. `what` names the request in error messages.
        """
        url = f"https://{reference.api_host}/v2/{reference.repository}/{path}"
        scope = f"repository:{reference.repository}:pull"
        proxy = self._proxies.for_url(url)

        async def once() -> T:
            """One attempt: with the authorization known, then once more after answering a 401."""
            for authenticated in (False, True):
                sent = dict(headers or {})
                authorization = self._known(reference.api_host, scope)
                if authorization:
                    sent["Authorization"] = authorization
                async with self._session.request(
                    method, url, headers=sent, ssl=self._trust.context(), proxy=proxy
                ) as response:
                    trace.get_current_span().set_attribute("http.response.status_code", response.status)
                    if response.status != 401 or authenticated:
                        return await self._answer(response, what, handle)
                    challenges = parse_challenges(response.headers.get("WWW-Authenticate", ""))
                await self._authenticate(reference, scope, challenges, what)
            raise Unauthorized(f"{what}: the registry asked to authenticate again after a successful login")

        # One client span for the call, retries included (`http.request.resend_count`); the
        # template names the kind of request (`manifests/{reference}`, `blobs/{digest}`).
        kind = path.split("/", 1)[0]
        with _TRACER.start_as_current_span(
            f"{method} /v2/{{name}}/{kind}/{{reference}}",
            attributes={
                "http.request.method": method,
                "server.address": reference.api_host,
                "url.full": url,
                "oci.repository": reference.repository,
            },
            kind=trace.SpanKind.CLIENT,
        ) as span:
            last = ""
            for attempt in range(1, self._retry.attempts + 1):
                if attempt > 1:
                    self.statistics.retries += 1
                    span.set_attribute("http.request.resend_count", attempt - 1)
                    await self._retry.sleep(self._retry.delay(attempt - 1))
                try:
                    return await once()
                except _Retry as retry:
                    last = retry.reason
                except aiohttp.ClientSSLError as error:
                    peer = tls_peer(error, proxy) or "the registry"
                    raise TLSVerificationFailed(f"{what}: TLS with {peer} failed: {error}") from None
                except aiohttp.TooManyRedirects:
                    raise ProtocolError(
                        f"{what}: the registry redirected badly: too many redirects"
                    ) from None
                except aiohttp.RedirectClientError as error:
                    # A redirect to something that is not an http(s) URL; the error names it.
                    raise ProtocolError(f"{what}: the registry redirected badly: {error}") from None
                except (aiohttp.ClientHttpProxyError, aiohttp.ClientProxyConnectionError) as error:
                    last = proxy_failure(error, proxy, url) or _transient_cause(error)
                except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError, TimeoutError) as error:
                    last = _transient_cause(error)
            raise TransientError(f"{what}: {last} (gave up after {self._retry.attempts} attempts)")

    async def _answer(
        self,
        response: aiohttp.ClientResponse,
        what: str,
        handle: Callable[[aiohttp.ClientResponse], Awaitable[T]],
    ) -> T:
        if response.status in (401, 403):
            raise Unauthorized(f"{what}: the registry refused access (HTTP {response.status})")
        if response.status == 404:
            raise NotFound(f"{what}: not found{await _registry_error(response)}")
        if response.status in TRANSIENT_STATUSES:
            raise _Retry(f"HTTP {response.status}")
        if not 200 <= response.status < 300:
            raise ProtocolError(f"{what}: HTTP {response.status}{await _registry_error(response)}")
        return await handle(response)

    def _known(self, host: str, scope: str) -> str | None:
        for key in ((host, scope), (host, "")):
            entry = self._authorization.get(key)
            if entry is not None and entry[1] > time.monotonic():
                return entry[0]
        return None

    async def _authenticate(
        self, reference: Reference, scope: str, challenges: list[Challenge], what: str
    ) -> None:
        credentials = self._keychain.for_reference(reference)
        by_scheme = {c.scheme: c for c in challenges}
        if "bearer" in by_scheme:
            challenge = by_scheme["bearer"]
            token, lifetime = await self._token(challenge, scope, credentials, what)
            expiry = time.monotonic() + max(lifetime - _TOKEN_MARGIN, 1.0)
            self._authorization[(reference.api_host, scope)] = (f"Bearer {token}", expiry)
        elif "basic" in by_scheme:
            if credentials is None or not (credentials.username or credentials.password):
                raise Unauthorized(
                    f"{what}: the registry requires credentials and no pull secret has any for it"
                )
            self._authorization[(reference.api_host, "")] = (credentials.basic(), float("inf"))
        else:
            schemes = ", ".join(sorted(by_scheme)) or "none"
            raise Unauthorized(
                f"{what}: the registry asked for an unsupported authentication scheme ({schemes})"
            )

    async def _token(
        self, challenge: Challenge, scope: str, credentials: Credentials | None, what: str
    ) -> tuple[str, float]:
        realm = challenge.params.get("realm", "")
        if not realm.startswith("https://"):
            raise Unauthorized(f"{what}: the token realm {realm!r} is not an https URL")
        params = {"scope": challenge.params.get("scope", scope)}
        if "service" in challenge.params:
            params["service"] = challenge.params["service"]
        self.statistics.token_requests += 1
        headers: dict[str, str] = {}
        proxy = self._proxies.for_url(realm)
        try:
            if credentials is not None and credentials.identity_token:
                form = {**params, "grant_type": "refresh_token", "refresh_token": credentials.identity_token}
                form["client_id"] = "olm-py"
                request = self._session.post(realm, data=form, ssl=self._trust.context(), proxy=proxy)
            else:
                if credentials is not None and (credentials.username or credentials.password):
                    headers["Authorization"] = credentials.basic()
                request = self._session.get(
                    realm, params=params, headers=headers, ssl=self._trust.context(), proxy=proxy
                )
            async with request as response:
                if response.status in (401, 403):
                    raise Unauthorized(
                        f"{what}: the token service refused the credentials (HTTP {response.status})"
                    )
                if response.status in TRANSIENT_STATUSES:
                    raise _Retry(f"token service HTTP {response.status}")
                if response.status != 200:
                    raise ProtocolError(f"{what}: the token service answered HTTP {response.status}")
                body = orjson.loads(await response.read())
        except orjson.JSONDecodeError:
            raise ProtocolError(f"{what}: the token service answered something that is not JSON") from None
        except (aiohttp.ClientHttpProxyError, aiohttp.ClientProxyConnectionError) as error:
            raise _Retry(proxy_failure(error, proxy, realm) or _transient_cause(error)) from None
        token = body.get("token") or body.get("access_token") if isinstance(body, dict) else None
        if not isinstance(token, str) or not token:
            raise ProtocolError(f"{what}: the token service answered without a token")
        lifetime = body.get("expires_in")
        return token, float(lifetime) if isinstance(lifetime, int | float) else _DEFAULT_TOKEN_LIFETIME


async def _registry_error(response: aiohttp.ClientResponse) -> str:
    """` (CODE: message)` from a distribution error body, if there is one."""
    try:
        body = orjson.loads(await response.content.read(64 << 10))
        first = body["errors"][0]
        return f" ({first.get('code', '')}: {first.get('message', '')})"
    except (orjson.JSONDecodeError, KeyError, IndexError, TypeError, AttributeError, RegistryError):
        return ""
    except (TimeoutError, aiohttp.ClientError):
        return ""


def _transient_cause(error: Exception) -> str:
    """What went wrong with the connection, in words that stay the same across retries: the
    socket error's text (`Connection refused`) when there is one, never addresses or ports."""
    os_error = getattr(error, "os_error", None)
    if isinstance(os_error, OSError) and os_error.errno:
        return f"{type(error).__name__}: {os.strerror(os_error.errno)}"
    return type(error).__name__
