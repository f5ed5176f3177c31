"""AdmissionReview v1: the request a webhook handler reads, the response it returns, and the helpers
that build responses (`allowed`, `denied`, `patched`, `errored`)."""

from __future__ import annotations

import base64
import dataclasses
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import orjson

from olm_runtime.client import GroupVersionKind, GroupVersionResource
from olm_runtime.manager.webhook import _jsonpatch

__all__ = [
    "ADMISSION_API_VERSION",
    "AdmissionRequest",
    "AdmissionResponse",
    "Handler",
    "InvalidReview",
    "allowed",
    "denied",
    "errored",
    "patched",
]

ADMISSION_API_VERSION = "admission.k8s.io/v1"
"""The only AdmissionReview version served (register webhooks with `admissionReviewVersions: ["v1"]`)."""


class InvalidReview(ValueError):
    """The request body is not an AdmissionReview v1 with a request; the server answers 400."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class AdmissionRequest:
    """What the API server asks a webhook about: one operation on one object."""

    uid: str
    """Identifies this call; the response must echo it (the server does that for you)."""
    operation: str
    """CREATE, UPDATE, DELETE or CONNECT."""
    kind: GroupVersionKind
    """The kind of `object` as sent to the webhook (after conversion to a version it asked for)."""
    resource: GroupVersionResource
    """The resource being changed."""
    sub_resource: str
    """The subresource (`status`, `scale`, ...) or empty."""
    name: str
    """The object's name; empty on a CREATE whose name the server generates."""
    namespace: str
    """The object's namespace; empty for cluster-scoped objects."""
    object: dict[str, Any] | None
    """The object after the operation (None on DELETE)."""
    old_object: dict[str, Any] | None
    """The object before the operation (UPDATE and DELETE only)."""
    user_info: Mapping[str, Any]
    """Who asked: `username`, `uid`, `groups`, `extra`."""
    dry_run: bool
    """True when the operation will not be persisted; a webhook with side effects must not apply them."""
    options: Mapping[str, Any] | None
    """The operation's options (`CreateOptions`, `UpdateOptions`, `DeleteOptions`), if any."""
    raw: Mapping[str, Any]
    """The `request` member exactly as received."""

    @classmethod
    def from_review(cls, review: Any) -> AdmissionRequest:
        """Parse a decoded AdmissionReview; raises `InvalidReview`."""
        if not isinstance(review, dict):
            raise InvalidReview("the body is not a JSON object")
        if review.get("apiVersion") != ADMISSION_API_VERSION or review.get("kind") != "AdmissionReview":
            raise InvalidReview(
                f"expected an {ADMISSION_API_VERSION} AdmissionReview, got "
                f"{review.get('apiVersion')!r} {review.get('kind')!r}"
            )
        request = review.get("request")
        if not isinstance(request, dict) or not request.get("uid"):
            raise InvalidReview("the AdmissionReview has no request uid")
        kind = request.get("kind") or {}
        resource = request.get("resource") or {}
        return cls(
            uid=str(request["uid"]),
            operation=str(request.get("operation") or ""),
            kind=GroupVersionKind(
                str(kind.get("group") or ""), str(kind.get("version") or ""), str(kind.get("kind") or "")
            ),
            resource=GroupVersionResource(
                str(resource.get("group") or ""),
                str(resource.get("version") or ""),
                str(resource.get("resource") or ""),
            ),
            sub_resource=str(request.get("subResource") or ""),
            name=str(request.get("name") or ""),
            namespace=str(request.get("namespace") or ""),
            object=request.get("object"),
            old_object=request.get("oldObject"),
            user_info=request.get("userInfo") or {},
            dry_run=bool(request.get("dryRun")),
            options=request.get("options"),
            raw=request,
        )


@dataclasses.dataclass(frozen=True, kw_only=True)
class AdmissionResponse:
    """A webhook's answer. Build it with `allowed`, `denied`, `patched` or `errored`."""

    allowed: bool
    """Whether the operation may proceed."""
    code: int = 200
    """The HTTP-style code in the response status; 403 for a denial, 500 for a handler error."""
    message: str = ""
    """Shown to the user when denied; say what to change."""
    reason: str = ""
    """A machine-readable reason for the status (e.g. `Forbidden`), optional."""
    patch: Sequence[Mapping[str, Any]] = ()
    """RFC 6902 operations to apply to the object (mutating webhooks only)."""
    warnings: Sequence[str] = ()
    """Warnings returned to the client (kubectl prints them), allowed or not."""
    audit_annotations: Mapping[str, str] = dataclasses.field(default_factory=dict)
    """Added to the audit record of the request."""

    def to_review(self, uid: str) -> dict[str, Any]:
        """The AdmissionReview v1 body answering the request `uid`."""
        response: dict[str, Any] = {"uid": uid, "allowed": self.allowed}
        if not self.allowed or self.message or self.code != 200:
            status: dict[str, Any] = {"code": self.code}
            if self.message:
                status["message"] = self.message
            if self.reason:
                status["reason"] = self.reason
            response["status"] = status
        if self.patch:
            response["patchType"] = "JSONPatch"
            response["patch"] = base64.b64encode(orjson.dumps(list(self.patch))).decode()
        if self.warnings:
            response["warnings"] = list(self.warnings)
        if self.audit_annotations:
            response["auditAnnotations"] = dict(self.audit_annotations)
        return {"apiVersion": ADMISSION_API_VERSION, "kind": "AdmissionReview", "response": response}


Handler = Callable[[AdmissionRequest], Awaitable[AdmissionResponse]]
"""A webhook: `async def handle(request: AdmissionRequest) -> AdmissionResponse`."""


def allowed(message: str = "", *, warnings: Sequence[str] = ()) -> AdmissionResponse:
    """Let the operation proceed unchanged."""
    return AdmissionResponse(allowed=True, message=message, warnings=tuple(warnings))


def denied(message: str, code: int = 403, *, reason: str = "Forbidden") -> AdmissionResponse:
    """Reject the operation; `message` reaches the user, so say what to change."""
    return AdmissionResponse(allowed=False, code=code, message=message, reason=reason)


def errored(message: str, code: int = 500) -> AdmissionResponse:
    """Reject because the webhook itself failed (not the object); the server's failurePolicy does not
    apply, since the webhook did answer."""
    return AdmissionResponse(allowed=False, code=code, message=message, reason="InternalError")


def patched(
    original: dict[str, Any], mutated: dict[str, Any], *, warnings: Sequence[str] = ()
) -> AdmissionResponse:
    """Allow the operation with the JSON patch that turns `original` into `mutated`.

    Typical use: `mutated = copy.deepcopy(request.object)`, change it, `return patched(request.object,
    mutated)`. Identical documents give an allowed response with no patch.
    """
    return AdmissionResponse(allowed=True, patch=_jsonpatch.diff(original, mutated), warnings=tuple(warnings))
