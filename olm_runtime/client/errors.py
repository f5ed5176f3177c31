"""Typed errors for API server responses.

Every response with a status of 400 or more becomes an `APIError` subclass chosen from the body's
`metav1.Status` (its `reason` first, then its HTTP code), so callers branch on types:

    try:
        obj = await client.get(kinds.CONFIG_MAP, "settings", namespace="ns")
    except errors.NotFound:
        obj = None

Failures below HTTP (refused connections, resets, TLS) raise `TransportError`; timeouts raise the
built-in `TimeoutError`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

__all__ = [
    "APIError",
    "AlreadyExists",
    "BadRequest",
    "Cause",
    "Conflict",
    "Forbidden",
    "Gone",
    "InternalError",
    "Invalid",
    "MethodNotAllowed",
    "NotFound",
    "ServerTimeout",
    "ServiceUnavailable",
    "TooManyRequests",
    "TransportError",
    "Unauthorized",
    "from_response",
    "from_status",
    "is_resource_version_too_large",
]


@dataclass(frozen=True)
class Cause:
    """One entry of `status.details.causes`: which field is wrong and why."""

    field: str
    """The field path, e.g. `metadata.name` or `spec.replicas` (empty when the cause is not a field)."""
    reason: str
    """A machine-readable cause such as `FieldValueInvalid` or `FieldValueRequired`."""
    message: str
    """The server's human-readable explanation."""


class TransportError(Exception):
    """The request did not get an HTTP response (connection refused or reset, TLS failure, ...).

    The underlying exception is chained as `__cause__`.
    """


class APIError(Exception):
    """The API server answered with an error status."""

    code: int = 0
    """The HTTP status a subclass stands for (0 on the base class)."""

    def __init__(
        self,
        status: int,
        reason: str,
        message: str,
        *,
        details: Mapping[str, Any] | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(f"{status} {reason}: {message}" if reason else f"{status}: {message}")
        self.status = status
        """The HTTP status code of the response."""
        self.reason = reason
        """The Status reason, e.g. `NotFound`, `AlreadyExists`, `Invalid` (empty when the body had none)."""
        self.message = message
        """The server's message, or the response text when the body was not a Status."""
        self.details: dict[str, Any] = dict(details or {})
        """The Status `details` (name, group, kind, uid, causes, retryAfterSeconds) as sent."""
        self.retry_after = retry_after
        """Seconds the server asked the client to wait (Retry-After or `details.retryAfterSeconds`)."""

    @property
    def causes(self) -> list[Cause]:
        """The structured causes, most useful on `Invalid` (one per rejected field)."""
        return [
            Cause(str(c.get("field", "")), str(c.get("reason", "")), str(c.get("message", "")))
            for c in self.details.get("causes") or ()
            if isinstance(c, Mapping)
        ]


class BadRequest(APIError):
    code = 400


class Unauthorized(APIError):
    """The credentials were missing, expired or not accepted."""

    code = 401


class Forbidden(APIError):
    """Authenticated, but RBAC (or an admission plugin) denied the request."""

    code = 403


class NotFound(APIError):
    code = 404


class MethodNotAllowed(APIError):
    code = 405


class AlreadyExists(APIError):
    """A create named an object that exists (409 with reason AlreadyExists)."""

    code = 409


class Conflict(APIError):
    """A 409 other than AlreadyExists: a stale resourceVersion, a failed precondition, an apply conflict."""

    code = 409


class Gone(APIError):
    """410 or reason Expired: the requested resourceVersion is too old; list again."""

    code = 410


class Invalid(APIError):
    """422: the object failed validation; `causes` names each rejected field."""

    code = 422


class TooManyRequests(APIError):
    """429: throttled by API Priority and Fairness; `retry_after` says how long to wait."""

    code = 429


class InternalError(APIError):
    code = 500


class ServiceUnavailable(APIError):
    code = 503


class ServerTimeout(APIError):
    """504 or reason Timeout/ServerTimeout: the server could not finish in time; retrying may work."""

    code = 504


_BY_REASON: dict[str, type[APIError]] = {
    "AlreadyExists": AlreadyExists,
    "Expired": Gone,
    "Gone": Gone,
    "Timeout": ServerTimeout,
    "ServerTimeout": ServerTimeout,
    "TooManyRequests": TooManyRequests,
    "Invalid": Invalid,
    "NotFound": NotFound,
    "Forbidden": Forbidden,
    "Unauthorized": Unauthorized,
}
_BY_CODE: dict[int, type[APIError]] = {
    cls.code: cls
    for cls in (
        BadRequest,
        Unauthorized,
        Forbidden,
        NotFound,
        MethodNotAllowed,
        Conflict,
        Gone,
        Invalid,
        TooManyRequests,
        InternalError,
        ServiceUnavailable,
        ServerTimeout,
    )
}


def _error_class(status: int, reason: str) -> type[APIError]:
    return _BY_REASON.get(reason) or _BY_CODE.get(status) or APIError


def _parse_retry_after(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        return None  # an HTTP date; the API server never sends one
    return max(seconds, 0.0)


def from_status(status: Mapping[str, Any], *, http_status: int | None = None) -> APIError:
    """Build the typed error for a decoded `metav1.Status` (also the object of a watch ERROR event)."""
    code = http_status if http_status is not None else int(status.get("code") or 500)
    reason = str(status.get("reason") or "")
    details = status.get("details")
    details = details if isinstance(details, Mapping) else {}
    retry = details.get("retryAfterSeconds")
    return _error_class(code, reason)(
        code,
        reason,
        str(status.get("message") or ""),
        details=details,
        retry_after=float(retry) if isinstance(retry, int | float) and retry > 0 else None,
    )


def from_response(status: int, body: bytes, headers: Mapping[str, str]) -> APIError:
    """Build the typed error for an HTTP error response, parsing its `metav1.Status` body when present."""
    parsed: Any = None
    try:
        parsed = orjson.loads(body) if body else None
    except orjson.JSONDecodeError:
        parsed = None
    if isinstance(parsed, dict) and parsed.get("kind") == "Status":
        error = from_status(parsed, http_status=status)
    else:
        text = body.decode("utf-8", errors="replace").strip()
        error = _error_class(status, "")(status, "", text or f"HTTP {status}")
    header_retry = _parse_retry_after(headers.get("Retry-After"))
    if header_retry is not None:
        error.retry_after = header_retry
    return error


def is_resource_version_too_large(error: BaseException) -> bool:
    """True for the server's "Too large resource version" timeout (a watch cache not yet caught up).

    A reflector treats it like `Gone`: relist instead of retrying the same resourceVersion.
    """
    return isinstance(error, ServerTimeout) and any(
        cause.reason == "ResourceVersionTooLarge" for cause in error.causes
    )
