"""Reading the audit log against RBAC rules (`olm_testkit.audit`): which events belong to a token,
and how a rule is matched with a request, as the RBAC authorizer matches them."""

from __future__ import annotations

import base64
import datetime
import json
from pathlib import Path
from typing import Any

import pytest

from olm_testkit import audit

USER = "system:serviceaccount:olmv1-system:catalogd"
ROLE = {
    "kind": "Role",
    "metadata": {"name": "r", "namespace": "olmv1-system"},
    "rules": [
        {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["get", "update"]},
        {"apiGroups": [""], "resources": ["secrets"], "resourceNames": ["pull"], "verbs": ["watch"]},
    ],
}
CLUSTER_ROLE = {
    "kind": "ClusterRole",
    "metadata": {"name": "c"},
    "rules": [{"apiGroups": ["g.io"], "resources": ["things/status"], "verbs": ["patch"]}],
}


def _event(audit_id: str, credential: str = "JTI=a", **fields: Any) -> dict[str, Any]:
    return {
        "auditID": audit_id,
        "verb": "get",
        "requestURI": "/version",
        "user": {"username": USER, "extra": {"authentication.kubernetes.io/credential-id": [credential]}},
        "responseStatus": {"code": 200},
        "annotations": {"authorization.k8s.io/decision": "allow"},
        **fields,
    }


def _request(**fields: Any) -> audit.Request:
    values: dict[str, Any] = {
        "verb": "get",
        "group": "",
        "resource": "",
        "namespace": "",
        "name": "",
        "path": "/",
        "code": 200,
        "allowed": True,
    }
    return audit.Request(**{**values, **fields})


def test_the_credential_id_is_the_jti_of_the_token() -> None:
    claims = base64.urlsafe_b64encode(json.dumps({"jti": "1234-abcd"}).encode()).decode().rstrip("=")
    assert audit.credential_id(f"header.{claims}.signature") == "JTI=1234-abcd"


def test_read_keeps_one_event_per_request_of_the_token_from_the_offset(tmp_path: Path) -> None:
    before = json.dumps(_event("old")) + "\n"
    watch: dict[str, Any] = {
        "verb": "watch",
        "requestURI": "/api/v1/namespaces/olmv1-system/secrets?fieldSelector=metadata.name%3Dpull&watch=true",
        "objectRef": {"resource": "secrets", "namespace": "olmv1-system", "name": "pull", "apiVersion": "v1"},
    }
    events = [
        _event("w", stage="ResponseStarted", **watch),
        _event("w", stage="ResponseComplete", **watch),
        _event("other-token", credential="JTI=b"),
        {**_event("other-user"), "user": {"username": "system:serviceaccount:x:y"}},
        _event(
            "s",
            verb="patch",
            requestURI="/apis/g.io/v1/things/t/status",
            objectRef={"resource": "things", "subresource": "status", "apiGroup": "g.io", "name": "t"},
            responseStatus={"code": 403},
            annotations={"authorization.k8s.io/decision": "forbid"},
        ),
    ]
    log = tmp_path / "audit.log"
    log.write_text(before + "".join(json.dumps(e) + "\n" for e in events))
    requests = audit.read(log, len(before), username=USER, credential="JTI=a")
    assert requests == [
        _request(
            verb="watch",
            resource="secrets",
            namespace="olmv1-system",
            name="pull",
            path="/api/v1/namespaces/olmv1-system/secrets",
        ),
        _request(
            verb="patch",
            group="g.io",
            resource="things/status",
            name="t",
            path="/apis/g.io/v1/things/t/status",
            code=403,
            allowed=False,
        ),
    ]


def test_service_account_requests_are_those_received_in_the_window_each_once(tmp_path: Path) -> None:
    def at(audit_id: str, received: str, username: str = USER, **fields: Any) -> dict[str, Any]:
        event = _event(audit_id, requestReceivedTimestamp=received, **fields)
        return {**event, "user": {"username": username}}

    events = [
        at("before", "2026-11-30T10:00:00.000000Z"),
        at("w", "2026-11-30T10:00:01.000000Z", stage="ResponseStarted", verb="watch"),
        at("w", "2026-11-30T10:00:01.000000Z", stage="ResponseComplete", verb="watch"),
        at("system", "2026-11-30T10:00:02.000000Z", username="system:serviceaccount:kube-system:x"),
        at("admin", "2026-11-30T10:00:02.000000Z", username="kubernetes-admin"),
        at("installer", "2026-11-30T10:00:03.000000Z", username="system:serviceaccount:team:installer"),
        at("after", "2026-11-30T10:00:04.000000Z"),
    ]
    log = tmp_path / "audit.log"
    log.write_text("".join(json.dumps(e) + "\n" for e in events))
    since = datetime.datetime.fromisoformat("2026-11-30T10:00:01+00:00")
    until = datetime.datetime.fromisoformat("2026-11-30T10:00:04+00:00")
    requests = audit.service_account_requests(log, since=since, until=until)
    assert [(account, request.verb) for account, request in requests] == [
        ("olmv1-system:catalogd", "watch"),
        ("team:installer", "get"),
    ]


def test_grants_expand_every_verb_resource_and_name_with_the_roles_namespace() -> None:
    described = [g.describe() for g in audit.grants([ROLE, CLUSTER_ROLE])]
    assert described == [
        "Role/r: get leases.coordination.k8s.io in olmv1-system",
        "Role/r: update leases.coordination.k8s.io in olmv1-system",
        "Role/r: watch secrets.core pull in olmv1-system",
        "ClusterRole/c: patch things/status.g.io",
    ]


LEASE = {"verb": "get", "group": "coordination.k8s.io", "resource": "leases", "namespace": "olmv1-system"}


@pytest.mark.parametrize(
    ("request_fields", "covered"),
    [
        pytest.param(LEASE, True, id="verb-group-resource-namespace"),
        pytest.param({**LEASE, "verb": "delete"}, False, id="other-verb"),
        pytest.param({**LEASE, "namespace": "default"}, False, id="role-outside-its-namespace"),
        pytest.param({**LEASE, "group": "other.io"}, False, id="other-group"),
        pytest.param(
            {"verb": "watch", "resource": "secrets", "namespace": "olmv1-system"}, False, id="unnamed"
        ),
        pytest.param(
            {"verb": "watch", "resource": "secrets", "namespace": "olmv1-system", "name": "pull"},
            True,
            id="resource-name",
        ),
        pytest.param(
            {"verb": "patch", "group": "g.io", "resource": "things"}, False, id="not-the-subresource"
        ),
        pytest.param(
            {"verb": "patch", "group": "g.io", "resource": "things/status", "namespace": "any"},
            True,
            id="cluster-role-in-any-namespace",
        ),
        pytest.param({"verb": "get", "path": "/apis/g.io/v1"}, False, id="non-resource"),
    ],
)
def test_covers_matches_as_the_rbac_authorizer(request_fields: dict[str, Any], covered: bool) -> None:
    request = _request(**request_fields)
    assert any(audit.covers(g, request) for g in audit.grants([ROLE, CLUSTER_ROLE])) is covered


@pytest.mark.parametrize(
    ("path", "verb", "expected"),
    [
        ("/version", "get", True),
        ("/apis/g.io/v1", "get", True),
        ("/api", "get", True),
        ("/metrics", "get", False),
        ("/apis-other", "get", False),
        ("/version", "post", False),
    ],
)
def test_discovery_is_reads_of_discovery_and_version(path: str, verb: str, expected: bool) -> None:
    assert audit.discovery(_request(verb=verb, path=path)) is expected


def test_summary_counts_requests_by_verb_and_resource() -> None:
    requests = [
        _request(verb="watch", resource="secrets"),
        _request(verb="watch", resource="secrets", name="pull"),
        _request(verb="get", path="/version"),
    ]
    assert audit.summary(requests) == {"get <discovery>": 1, "watch secrets.core": 2}


@pytest.mark.parametrize(
    ("verb", "group", "resource", "path", "expected"),
    [
        ("get", "", "", "/apis", True),
        (
            "create",
            "authorization.k8s.io",
            "selfsubjectaccessreviews",
            "/apis/authorization.k8s.io/v1/x",
            True,
        ),
        (
            "create",
            "authorization.k8s.io",
            "selfsubjectrulesreviews",
            "/apis/authorization.k8s.io/v1/x",
            True,
        ),
        ("create", "authorization.k8s.io", "subjectaccessreviews", "/apis/authorization.k8s.io/v1/x", False),
        ("get", "", "secrets", "/api/v1/namespaces/x/secrets/y", False),
    ],
)
def test_granted_by_default_is_discovery_and_self_reviews(
    verb: str, group: str, resource: str, path: str, expected: bool
) -> None:
    request = _request(verb=verb, path=path, group=group, resource=resource)
    assert audit.granted_by_default(request) is expected


def test_refused_uncovered_and_unused_are_what_the_rbac_proofs_assert() -> None:
    lease = _request(**LEASE)
    forbidden = _request(**{**LEASE, "verb": "delete", "code": 403, "allowed": False})
    discovery = _request(verb="get", path="/apis")
    grants = audit.grants([ROLE, CLUSTER_ROLE])
    assert audit.refused([lease, forbidden, discovery]) == [forbidden.describe()]
    assert audit.uncovered([lease, forbidden, discovery], grants) == [forbidden.describe()]
    used = [g for g in grants if audit.covers(g, lease)]
    assert used
    assert audit.unused(grants, [lease, discovery]) == [g for g in grants if g not in used]
