"""API error responses become typed exceptions carrying the server's message and causes.

The NotFound, AlreadyExists, Conflict, Invalid and Forbidden bodies were captured from kube-apiserver
v1.35 (the project's control plane); the rest follow the same shape with the reasons, codes and details
the server uses for those cases.
"""

from __future__ import annotations

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from olm_runtime.client import errors

NOT_FOUND = (
    b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmap'
    b's \\"missing\\" not found","reason":"NotFound","details":{"name":"missing","kind":"configm'
    b'aps"},"code":404}'
)
ALREADY_EXISTS = (
    b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmap'
    b's \\"x\\" already exists","reason":"AlreadyExists","details":{"name":"x","kind":"configmap'
    b's"},"code":409}'
)
STALE_UPDATE = (
    b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Operation'
    b' cannot be fulfilled on configmaps \\"x\\": the object has been modified; please apply you'
    b'r changes to the latest version and try again","reason":"Conflict","details":{"name":"x"'
    b',"kind":"configmaps"},"code":409}'
)
APPLY_CONFLICT = (
    b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Apply fai'
    b'led with 1 conflict: conflict with \\"e2e-admin\\" using v1: .data.a","reason":"Conflict",'
    b'"details":{"causes":[{"reason":"FieldManagerConflict","message":"conflict with \\"e2e-adm'
    b'in\\" using v1","field":".data.a"}]},"code":409}'
)
INVALID = (
    b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Widget.g.'
    b'example.com \\"Bad_Name\\" is invalid: [metadata.name: Invalid value: \\"Bad_Name\\": a lowe'
    b"rcase RFC 1123 subdomain must consist of lower case alphanumeric characters, spec.size: "
    b'Invalid value: 0: spec.size in body should be greater than or equal to 1]","reason":"Inv'
    b'alid","details":{"name":"Bad_Name","group":"g.example.com","kind":"Widget","causes":[{"r'
    b'eason":"FieldValueInvalid","message":"Invalid value: \\"Bad_Name\\": a lowercase RFC 1123 '
    b'subdomain","field":"metadata.name"},{"reason":"FieldValueInvalid","message":"Invalid val'
    b'ue: 0: spec.size in body should be greater than or equal to 1","field":"spec.size"}]},"c'
    b'ode":422}'
)
FORBIDDEN = (
    b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmap'
    b's is forbidden: User \\"system:serviceaccount:ns:reader\\" cannot list resource \\"configma'
    b'ps\\" in API group \\"\\" in the namespace \\"ns\\"","reason":"Forbidden","details":{"kind":"'
    b'configmaps"},"code":403}'
)
EXPIRED = (
    b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old r'
    b'esource version: 1 (240)","reason":"Expired","code":410}'
)
THROTTLED = (
    b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Too many '
    b'requests, please try again later.","reason":"TooManyRequests","details":{"retryAfterSeco'
    b'nds":1},"code":429}'
)
TOO_LARGE_RV = (
    b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Timeout: '
    b'Too large resource version: 999, current: 240","reason":"Timeout","details":{"causes":[{'
    b'"reason":"ResourceVersionTooLarge","message":"Too large resource version"}],"retryAfterS'
    b'econds":1},"code":504}'
)
SERVER_TIMEOUT = (
    b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"The list '
    b'operation against pods could not be completed at this time, please try again.","reason":'
    b'"ServerTimeout","details":{"name":"list","kind":"pods","retryAfterSeconds":2},"code":500'
    b"}"
)


@pytest.mark.parametrize(
    ("status", "body", "cls", "reason"),
    [
        pytest.param(404, NOT_FOUND, errors.NotFound, "NotFound", id="not-found"),
        pytest.param(409, ALREADY_EXISTS, errors.AlreadyExists, "AlreadyExists", id="already-exists"),
        pytest.param(409, STALE_UPDATE, errors.Conflict, "Conflict", id="stale-update-conflict"),
        pytest.param(409, APPLY_CONFLICT, errors.Conflict, "Conflict", id="apply-conflict"),
        pytest.param(422, INVALID, errors.Invalid, "Invalid", id="invalid"),
        pytest.param(403, FORBIDDEN, errors.Forbidden, "Forbidden", id="forbidden"),
        pytest.param(410, EXPIRED, errors.Gone, "Expired", id="expired-is-gone"),
        pytest.param(429, THROTTLED, errors.TooManyRequests, "TooManyRequests", id="throttled"),
        pytest.param(504, TOO_LARGE_RV, errors.ServerTimeout, "Timeout", id="timeout"),
        pytest.param(500, SERVER_TIMEOUT, errors.ServerTimeout, "ServerTimeout", id="server-timeout-on-500"),
    ],
)
def test_status_bodies_map_to_typed_errors(
    status: int, body: bytes, cls: type[errors.APIError], reason: str
) -> None:
    error = errors.from_response(status, body, {})
    assert type(error) is cls
    assert error.status == status
    assert error.reason == reason
    assert error.message
    assert error.message in str(error)


def test_already_exists_is_not_a_conflict() -> None:
    assert not isinstance(errors.from_response(409, ALREADY_EXISTS, {}), errors.Conflict)


def test_invalid_names_each_rejected_field() -> None:
    error = errors.from_response(422, INVALID, {})
    assert [(c.field, c.reason) for c in error.causes] == [
        ("metadata.name", "FieldValueInvalid"),
        ("spec.size", "FieldValueInvalid"),
    ]
    assert "greater than or equal to 1" in error.causes[1].message
    assert error.details["kind"] == "Widget"


def test_apply_conflict_names_the_contested_field() -> None:
    error = errors.from_response(409, APPLY_CONFLICT, {})
    assert [(c.field, c.reason) for c in error.causes] == [(".data.a", "FieldManagerConflict")]


def test_retry_after_comes_from_the_header_before_the_body() -> None:
    assert errors.from_response(429, THROTTLED, {}).retry_after == 1.0
    assert errors.from_response(429, THROTTLED, {"Retry-After": "7"}).retry_after == 7.0
    assert errors.from_response(500, SERVER_TIMEOUT, {}).retry_after == 2.0
    assert errors.from_response(404, NOT_FOUND, {}).retry_after is None


def test_an_unparseable_retry_after_header_is_ignored() -> None:
    date = {"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}
    assert errors.from_response(429, THROTTLED, date).retry_after == 1.0


@pytest.mark.parametrize(
    ("status", "cls"),
    [
        pytest.param(400, errors.BadRequest, id="400"),
        pytest.param(401, errors.Unauthorized, id="401"),
        pytest.param(403, errors.Forbidden, id="403"),
        pytest.param(404, errors.NotFound, id="404"),
        pytest.param(405, errors.MethodNotAllowed, id="405"),
        pytest.param(409, errors.Conflict, id="409"),
        pytest.param(410, errors.Gone, id="410"),
        pytest.param(422, errors.Invalid, id="422"),
        pytest.param(429, errors.TooManyRequests, id="429"),
        pytest.param(500, errors.InternalError, id="500"),
        pytest.param(503, errors.ServiceUnavailable, id="503"),
        pytest.param(504, errors.ServerTimeout, id="504"),
        pytest.param(418, errors.APIError, id="unknown-code-is-the-base-class"),
    ],
)
def test_non_status_bodies_fall_back_to_the_code_and_text(status: int, cls: type[errors.APIError]) -> None:
    error = errors.from_response(status, b"Unauthorized\n", {})
    assert type(error) is cls
    assert error.message == "Unauthorized"
    assert error.reason == ""


def test_an_empty_body_still_says_something() -> None:
    assert errors.from_response(503, b"", {}).message == "HTTP 503"


def test_watch_error_event_status_uses_its_own_code() -> None:
    status = {
        "kind": "Status",
        "status": "Failure",
        "message": "too old resource version",
        "reason": "Expired",
        "code": 410,
    }
    error = errors.from_status(status)
    assert isinstance(error, errors.Gone)
    assert error.status == 410


def test_too_large_resource_version_is_recognised() -> None:
    assert errors.is_resource_version_too_large(errors.from_response(504, TOO_LARGE_RV, {}))
    assert not errors.is_resource_version_too_large(errors.from_response(500, SERVER_TIMEOUT, {}))
    assert not errors.is_resource_version_too_large(ValueError())


# The docs' table, written out. These reasons decide the class whatever the code; any other reason
# (the one that goes with the code, an empty one, one this client does not know) leaves it to the code.
BY_REASON: dict[str, type[errors.APIError]] = {
    "AlreadyExists": errors.AlreadyExists,
    "Expired": errors.Gone,
    "Timeout": errors.ServerTimeout,
    "ServerTimeout": errors.ServerTimeout,
}
NATURAL_REASON = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    409: "Conflict",
    410: "Gone",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}
BY_CODE: dict[int, type[errors.APIError]] = {
    400: errors.BadRequest,
    401: errors.Unauthorized,
    403: errors.Forbidden,
    404: errors.NotFound,
    405: errors.MethodNotAllowed,
    409: errors.Conflict,
    410: errors.Gone,
    422: errors.Invalid,
    429: errors.TooManyRequests,
    500: errors.InternalError,
    503: errors.ServiceUnavailable,
    504: errors.ServerTimeout,
}


@settings(max_examples=300, deadline=None)
@given(
    status=st.one_of(st.sampled_from(sorted(BY_CODE)), st.integers(min_value=400, max_value=599)),
    reason_kind=st.sampled_from(["deciding", "natural", "empty", "unknown"]),
    deciding=st.sampled_from(sorted(BY_REASON)),
    message=st.text(max_size=40),
)
def test_every_error_status_raises_the_class_its_reason_or_else_its_code_names(
    status: int, reason_kind: str, deciding: str, message: str
) -> None:
    reason = {
        "deciding": deciding,
        "natural": NATURAL_REASON.get(status, ""),
        "empty": "",
        "unknown": "SomethingNew",
    }[reason_kind]
    body = orjson.dumps(
        {"kind": "Status", "status": "Failure", "reason": reason, "message": message, "code": status}
    )
    error = errors.from_response(status, body, {})
    expected = BY_REASON.get(reason) or BY_CODE.get(status) or errors.APIError
    assert type(error) is expected
    assert isinstance(error, errors.APIError)
    assert error.status == status
    if message:
        assert error.message == message, "the server's message is kept unchanged"
