"""Who may read `/metrics`: the API server decides, as controller-runtime's secure metrics filter does.

Every request to the secure metrics listener goes through `MetricsAuth.middleware`:

1. its `Authorization: Bearer <token>` header is sent in a `TokenReview` (authentication.k8s.io/v1);
   no token, or one the API server does not accept, is answered 401;
2. the user the review names is checked with a `SubjectAccessReview` (authorization.k8s.io/v1) on the
   non-resource URL of the request (its path, so `/metrics`) with the lower-cased HTTP method as verb
   (`get`); a denial is answered 403;
3. a review that fails (the API server is unreachable, or this process may not create reviews) is
   answered 500 and not remembered.

Answers are remembered so that a scraper every 15 s does not cost two API calls per scrape. The
lifetimes are controller-runtime's: a token's review for 60 s (accepted or not), an allowed access for
5 minutes, a denied one for 30 s. So a revoked token still reads metrics for up to a minute and a
removed ClusterRoleBinding for up to five, while a newly granted scraper waits at most 30 s. Tokens
are remembered by their SHA-256, never in clear, and each memory holds a bounded number of answers,
so a stream of made-up tokens costs reviews but not memory.

The reviews are counted under the names the Kubernetes API server libraries use for the same
delegation: `apiserver_delegated_authn_request_total{code}` and
`apiserver_delegated_authz_request_total{code}` (`code` is the HTTP status of the review call, `0` when
no answer came).
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import hashlib
from collections.abc import Awaitable, Callable, Hashable, Mapping
from typing import Any, Generic, TypeVar

from aiohttp import web
from prometheus_client import Counter

from olm_runtime import clock, logging, metrics
from olm_runtime.client import Client, errors, kinds

__all__ = [
    "ALLOWED_TTL",
    "DENIED_TTL",
    "REVIEW_TIMEOUT",
    "TOKEN_TTL",
    "MetricsAuth",
    "ReviewCache",
    "User",
    "bearer_token",
]

_log = logging.get_logger("olm_runtime.manager.metrics")

TOKEN_TTL = 60.0
"""Seconds a token's review (accepted or rejected) is remembered."""
ALLOWED_TTL = 300.0
"""Seconds an allowed (user, verb, path) is remembered."""
DENIED_TTL = 30.0
"""Seconds a denied (user, verb, path) is remembered."""
REVIEW_TIMEOUT = 10.0
"""Seconds one TokenReview or SubjectAccessReview may take before the request is answered 500."""
MAX_ENTRIES = 4096
"""Answers each memory holds at most; the least recently used goes first."""

AUTHN_REQUESTS = Counter(
    "apiserver_delegated_authn_request_total",
    "Number of TokenReview calls made to authenticate metrics readers, by HTTP status code.",
    ("code",),
    registry=metrics.REGISTRY,
)
AUTHZ_REQUESTS = Counter(
    "apiserver_delegated_authz_request_total",
    "Number of SubjectAccessReview calls made to authorize metrics readers, by HTTP status code.",
    ("code",),
    registry=metrics.REGISTRY,
)

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class ReviewCache(Generic[K, V]):
    """Answers that expire: each entry lives for the TTL it was stored with, and at most
    `max_entries` are kept (storing one more drops the least recently used)."""

    def __init__(self, *, max_entries: int = MAX_ENTRIES, time: clock.Clock = clock.REAL) -> None:
        if max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        self._max_entries = max_entries
        self._clock = time
        self._entries: collections.OrderedDict[K, tuple[float, V]] = collections.OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: K) -> V | None:
        """The answer stored for `key`, or None once it expired (or was never stored)."""
        entry = self._entries.get(key)
        if entry is None:
            return None
        expires, value = entry
        if self._clock.now() >= expires:
            del self._entries[key]
            return None
        self._entries.move_to_end(key)
        return value

    def put(self, key: K, value: V, ttl: float) -> None:
        self._entries[key] = (self._clock.now() + ttl, value)
        self._entries.move_to_end(key)
        while len(self._entries) > self._max_entries:
            self._entries.popitem(last=False)


def bearer_token(authorization: str | None) -> str | None:
    """The token of an `Authorization: Bearer <token>` header value; None for any other scheme, an
    empty token, or no header. The scheme is case-insensitive (RFC 7235)."""
    if not authorization:
        return None
    scheme, _, token = authorization.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or " " in token:
        return None
    return token


@dataclasses.dataclass(frozen=True)
class User:
    """Who a token belongs to, as the TokenReview said; hashable, so it keys the access memory."""

    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @classmethod
    def from_review(cls, user: Mapping[str, Any]) -> User:
        extra = user.get("extra") or {}
        return cls(
            name=str(user.get("username") or ""),
            uid=str(user.get("uid") or ""),
            groups=tuple(str(g) for g in user.get("groups") or ()),
            extra=tuple(sorted((str(k), tuple(str(v) for v in values)) for k, values in extra.items())),
        )


@dataclasses.dataclass(frozen=True)
class _TokenAnswer:
    """A remembered TokenReview: the user, or None for a rejected token (so that a rejection is
    remembered too, unlike a miss)."""

    user: User | None


class _ReviewFailed(Exception):
    """A review call got no usable answer; the request is answered 500 and nothing is remembered."""


_Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class MetricsAuth:
    """Authenticates and authorizes requests with `client` (which needs `create` on `tokenreviews`
    and `subjectaccessreviews`); install `middleware` on the metrics application."""

    def __init__(self, client: Client, *, time: clock.Clock = clock.REAL) -> None:
        self._client = client
        self._tokens: ReviewCache[bytes, _TokenAnswer] = ReviewCache(time=time)
        self._access: ReviewCache[tuple[User, str, str], bool] = ReviewCache(time=time)

    @web.middleware
    async def middleware(self, request: web.Request, handler: _Handler) -> web.StreamResponse:
        token = bearer_token(request.headers.get("Authorization"))
        try:
            user = await self.authenticate(token) if token is not None else None
        except _ReviewFailed as e:
            _log.error("metrics reader authentication failed", error=str(e))
            return web.Response(status=500, text="Authentication failed\n")
        if user is None:
            return web.Response(status=401, text="Unauthorized\n")
        verb = request.method.lower()
        try:
            allowed = await self.authorize(user, verb, request.path)
        except _ReviewFailed as e:
            _log.error("metrics reader authorization failed", user=user.name, error=str(e))
            return web.Response(status=500, text=f"Authorization for user {user.name} failed\n")
        if not allowed:
            _log.debug("metrics reader denied", user=user.name, verb=verb, path=request.path)
            return web.Response(status=403, text=f"Authorization denied for user {user.name}\n")
        return await handler(request)

    async def authenticate(self, token: str) -> User | None:
        """The user `token` belongs to; None when the API server does not accept it."""
        key = hashlib.sha256(token.encode()).digest()
        cached = self._tokens.get(key)
        if cached is not None:
            return cached.user
        review = {
            "apiVersion": kinds.TOKEN_REVIEW.api_version,
            "kind": kinds.TOKEN_REVIEW.kind,
            "spec": {"token": token},
        }
        status = (await self._review(review, AUTHN_REQUESTS)).get("status") or {}
        user = User.from_review(status.get("user") or {}) if status.get("authenticated") else None
        self._tokens.put(key, _TokenAnswer(user), TOKEN_TTL)
        return user

    async def authorize(self, user: User, verb: str, path: str) -> bool:
        """Whether `user` may `verb` the non-resource URL `path`."""
        key = (user, verb, path)
        cached = self._access.get(key)
        if cached is not None:
            return cached
        spec: dict[str, Any] = {
            "user": user.name,
            "groups": list(user.groups),
            "nonResourceAttributes": {"path": path, "verb": verb},
        }
        if user.uid:
            spec["uid"] = user.uid
        if user.extra:
            spec["extra"] = {name: list(values) for name, values in user.extra}
        review = {
            "apiVersion": kinds.SUBJECT_ACCESS_REVIEW.api_version,
            "kind": kinds.SUBJECT_ACCESS_REVIEW.kind,
            "spec": spec,
        }
        status = (await self._review(review, AUTHZ_REQUESTS)).get("status") or {}
        allowed = bool(status.get("allowed")) and not status.get("denied")
        self._access.put(key, allowed, ALLOWED_TTL if allowed else DENIED_TTL)
        return allowed

    async def _review(self, review: Mapping[str, Any], counter: Counter) -> dict[str, Any]:
        try:
            async with asyncio.timeout(REVIEW_TIMEOUT):
                answer = await self._client.create(review)
        except errors.APIError as e:
            counter.labels(str(e.status)).inc()
            raise _ReviewFailed(str(e)) from e
        except (errors.TransportError, TimeoutError) as e:
            counter.labels("0").inc()
            raise _ReviewFailed(str(e) or type(e).__name__) from e
        counter.labels("201").inc()
        return answer
