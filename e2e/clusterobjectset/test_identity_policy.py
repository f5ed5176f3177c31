"""Who may name the ServiceAccount a revision is applied as: the API server refuses a ClusterObjectSet
that names an account its requester may not act as (the ValidatingAdmissionPolicy of
`manifests/operator-controller/identity-policies.yaml`, installed by the `olm_crds` fixture
as by the shipped kustomization), and the controller acts as a named account only while that policy
is in force.

The requester is a ServiceAccount `author` that may create and patch ClusterObjectSets and nothing
else; the account it tries to name is bound to cluster-admin. That operator-controller's own
revisions still pass is shown by every install test, and with operator-controller's shipped RBAC by
`e2e/operator_controller/test_rbac.py` and the deployed suite."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import AsyncIterator
from typing import Any

import pytest

from e2e.clusterobjectset.conftest import OPTIONS, Revisions, config_map, exists, inline, running
from olm.api.kinds import CLUSTER_EXTENSION, CLUSTER_OBJECT_SET
from olm.operator_controller import clusterextension, clusterobjectset
from olm.operator_controller.clusterobjectset import identity
from olm_runtime.client import Client, GroupVersionKind, errors, kinds
from olm_runtime.manager import Manager
from olm_runtime.testing import settle
from olm_runtime.testing.poll import eventually

POLICY = clusterobjectset.IDENTITY_POLICY
EXTENSION_POLICY = clusterextension.Options.identity_policy
AUTHOR = "author"


def _rbac(
    name: str, rules: list[dict[str, Any]], *, author_namespace: str, role_namespace: str | None = None
) -> list[dict[str, Any]]:
    """A Role in `role_namespace` (a ClusterRole without one) with `rules`, and its binding to the
    author of `author_namespace`."""
    kind = "Role" if role_namespace else "ClusterRole"
    metadata: dict[str, Any] = {"name": name} | ({"namespace": role_namespace} if role_namespace else {})
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": metadata, "rules": rules}
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": f"{kind}Binding",
        "metadata": metadata,
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": name},
        "subjects": [{"kind": "ServiceAccount", "name": AUTHOR, "namespace": author_namespace}],
    }
    return [role, binding]


@pytest.fixture
async def author(admin_client: Client, namespace: str, olm_crds: None) -> AsyncIterator[Client]:
    """A client of a ServiceAccount that may write ClusterObjectSets, once the authorizer knows it."""
    await admin_client.create(
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": AUTHOR, "namespace": namespace}}
    )
    name = f"{namespace}-cos-author"
    rules = [
        {
            "apiGroups": [CLUSTER_OBJECT_SET.group],
            "resources": ["clusterobjectsets", "clusterextensions"],
            "verbs": ["get", "create", "patch", "update", "delete"],
        }
    ]
    for document in _rbac(name, rules, author_namespace=namespace):
        await admin_client.apply(document, field_manager="e2e-identity-policy", force=True)
    subject = settle.service_account(namespace, AUTHOR)
    await settle.allowed(
        admin_client, subject, verb="create", resource="clusterobjectsets", group=CLUSTER_OBJECT_SET.group
    )
    try:
        yield admin_client.for_service_account(namespace, AUTHOR)
    finally:
        for gvk in (kinds.CLUSTER_ROLE_BINDING, kinds.CLUSTER_ROLE):
            with contextlib.suppress(errors.NotFound):
                await admin_client.delete(gvk, name)


async def _first_refusal(author: Client, body: dict[str, Any]) -> errors.Forbidden:
    """The refusal of a dry-run creation of `body`, once the API server refuses it: a policy is
    loaded a moment after it is created (at session start), and dry runs are admitted like real
    requests."""
    refused: list[errors.Forbidden] = []

    async def refuses() -> bool:
        try:
            await author.create(body, dry_run=True)
        except errors.Forbidden as e:
            refused.append(e)
            return True
        return False

    await eventually(
        refuses, what=f"the API server to refuse {body['kind']} {body['metadata']['name']}", timeout=30
    )
    return refused[-1]


def _refused_by_the_policy(error: errors.APIError, namespace: str, account: str) -> None:
    assert isinstance(error, errors.Forbidden), error
    assert POLICY in error.message, error.message
    assert f"names ServiceAccount {namespace}/{account}" in error.message, error.message
    assert f"system:serviceaccount:{namespace}:{AUTHOR} may neither create tokens" in error.message


async def test_naming_an_account_the_requester_may_not_use_is_refused_at_creation_and_at_patch(
    admin_client: Client, author: Client, namespace: str, account: str
) -> None:
    as_author = Revisions(author, namespace, account)
    as_admin = Revisions(admin_client, namespace, account, prefix=as_author.prefix)
    named = {
        "metadata": {
            "annotations": {
                identity.SERVICE_ACCOUNT_NAME: account,
                identity.SERVICE_ACCOUNT_NAMESPACE: namespace,
            }
        }
    }
    try:
        probe = {
            "apiVersion": CLUSTER_OBJECT_SET.api_version,
            "kind": CLUSTER_OBJECT_SET.kind,
            "metadata": {"name": as_author.name("probe"), "annotations": named["metadata"]["annotations"]},
            "spec": {
                "revision": 1,
                "lifecycleState": "Active",
                "collisionProtection": "Prevent",
                "phases": [],
            },
        }
        _refused_by_the_policy(await _first_refusal(author, probe), namespace, account)

        with pytest.raises(errors.Forbidden) as created:
            await as_author.create("named", [("cm", inline(config_map("named", namespace)))])
        _refused_by_the_policy(created.value, namespace, account)
        assert not await exists(admin_client, CLUSTER_OBJECT_SET, as_author.name("named"))

        # Naming no account is the author's right (the controller then blocks the revision) ...
        await as_author.create("anon", [("cm", inline(config_map("anon", namespace)))], service_account=None)
        # ... but adding the annotations afterwards is the same request as creating it with them.
        with pytest.raises(errors.Forbidden) as patched:
            await author.patch(CLUSTER_OBJECT_SET, as_author.name("anon"), named)
        _refused_by_the_policy(patched.value, namespace, account)

        # On a revision an administrator wrote, the author may change what leaves the account alone,
        # and may not point it at another account.
        await as_admin.create("admins", [("cm", inline(config_map("admins", namespace)))])
        await author.patch(CLUSTER_OBJECT_SET, as_admin.name("admins"), {"metadata": {"labels": {"k": "v"}}})
        renamed = {"metadata": {"annotations": {identity.SERVICE_ACCOUNT_NAME: "default"}}}
        with pytest.raises(errors.Forbidden) as repointed:
            await author.patch(CLUSTER_OBJECT_SET, as_admin.name("admins"), renamed)
        _refused_by_the_policy(repointed.value, namespace, "default")
        stored = await admin_client.get(CLUSTER_OBJECT_SET, as_admin.name("admins"))
        assert stored["metadata"]["annotations"][identity.SERVICE_ACCOUNT_NAME] == account
        assert stored["metadata"]["labels"]["k"] == "v"
    finally:
        await as_author.cleanup()
        await as_admin.cleanup()


@pytest.mark.parametrize(
    "rule",
    [
        pytest.param({"resources": ["serviceaccounts/token"], "verbs": ["create"]}, id="token"),
        pytest.param({"resources": ["serviceaccounts"], "verbs": ["impersonate"]}, id="impersonate"),
    ],
)
async def test_a_requester_who_may_act_as_the_account_may_name_it(
    admin_client: Client, author: Client, namespace: str, account: str, rule: dict[str, Any]
) -> None:
    grant = {"apiGroups": [""], "resourceNames": [account]} | rule
    for document in _rbac("act-as-installer", [grant], author_namespace=namespace, role_namespace=namespace):
        await admin_client.apply(document, field_manager="e2e-identity-policy", force=True)
    resource, _, subresource = rule["resources"][0].partition("/")
    await settle.allowed(
        admin_client,
        settle.service_account(namespace, AUTHOR),
        verb=rule["verbs"][0],
        resource=resource,
        subresource=subresource,
        namespace=namespace,
        name=account,
    )
    as_author = Revisions(author, namespace, account)
    try:
        created = await as_author.create("named", [("cm", inline(config_map("named", namespace)))])
        assert created["metadata"]["annotations"][identity.SERVICE_ACCOUNT_NAME] == account
        # The grant names one account: another one in the same namespace is still refused.
        with pytest.raises(errors.Forbidden) as other:
            await as_author.create(
                "other", [("cm", inline(config_map("other", namespace)))], service_account="x"
            )
        _refused_by_the_policy(other.value, namespace, "x")
    finally:
        await as_author.cleanup()


def _extension(name: str, namespace: str, account: str) -> dict[str, Any]:
    return {
        "apiVersion": CLUSTER_EXTENSION.api_version,
        "kind": CLUSTER_EXTENSION.kind,
        "metadata": {"name": name},
        "spec": {
            "namespace": namespace,
            "serviceAccount": {"name": account},
            "source": {"sourceType": "Catalog", "catalog": {"packageName": "no-such-package"}},
        },
    }


async def test_a_cluster_extension_naming_an_account_the_requester_may_not_use_is_refused(
    admin_client: Client, author: Client, namespace: str, account: str
) -> None:
    """The same rule one level up: the ServiceAccount an extension is installed as."""
    name = f"{namespace}-ext"
    await _first_refusal(author, _extension(name, namespace, account))
    with pytest.raises(errors.Forbidden) as refused:
        await author.create(_extension(name, namespace, account))
    assert EXTENSION_POLICY in refused.value.message, refused.value.message
    assert f"ClusterExtension {name} names ServiceAccount {namespace}/{account} to install as" in (
        refused.value.message
    )
    assert not await exists(admin_client, CLUSTER_EXTENSION, name)
    # Naming none is allowed (the extension is then held, or installed as the default installer an
    # administrator configured), and a dry run admits like a real request without storing anything.
    anonymous = _extension(name, namespace, account)
    del anonymous["spec"]["serviceAccount"]
    await author.create(anonymous, dry_run=True)

    grant = {
        "apiGroups": [""],
        "resources": ["serviceaccounts/token"],
        "resourceNames": [account],
        "verbs": ["create"],
    }
    for document in _rbac("act-as-installer", [grant], author_namespace=namespace, role_namespace=namespace):
        await admin_client.apply(document, field_manager="e2e-identity-policy", force=True)
    await settle.allowed(
        admin_client,
        settle.service_account(namespace, AUTHOR),
        verb="create",
        resource="serviceaccounts",
        subresource="token",
        namespace=namespace,
        name=account,
    )
    admitted = await author.create(_extension(name, namespace, account), dry_run=True)
    assert admitted["spec"]["serviceAccount"]["name"] == account


POLICY_KIND = GroupVersionKind("admissionregistration.k8s.io", "v1", "ValidatingAdmissionPolicy")
BINDING_KIND = GroupVersionKind("admissionregistration.k8s.io", "v1", "ValidatingAdmissionPolicyBinding")


NARROWED = {"objectSelector": {"matchLabels": {"x": "y"}}}


@pytest.mark.parametrize(
    "case",
    [
        pytest.param((None, "or its binding is not installed"), id="absent"),
        pytest.param(({"validationActions": ["Audit"]}, "does not bind"), id="audit-only"),
        pytest.param(
            ({"validationActions": ["Deny"], "matchResources": NARROWED}, "to some objects only"),
            id="narrowed",
        ),
    ],
)
async def test_the_controller_acts_as_a_named_account_only_while_the_policy_is_in_force(
    admin_client: Client,
    manager: Manager,
    namespace: str,
    account: str,
    case: tuple[dict[str, Any] | None, str],
) -> None:
    """Each case names a policy of its own (the shipped one stays in force for the other tests)."""
    binding_spec, problem = case
    name = f"olm-test-{namespace}"
    if binding_spec is not None:
        shipped = await admin_client.get(POLICY_KIND, POLICY)
        await admin_client.create(
            {"apiVersion": POLICY_KIND.api_version, "kind": POLICY_KIND.kind, "metadata": {"name": name}}
            | {"spec": shipped["spec"]}
        )
        await admin_client.create(
            {
                "apiVersion": BINDING_KIND.api_version,
                "kind": BINDING_KIND.kind,
                "metadata": {"name": name},
                "spec": {"policyName": name} | binding_spec,
            }
        )
    revisions = Revisions(admin_client, namespace, account)
    try:
        async with running(manager, dataclasses.replace(OPTIONS, identity_policy=name)):
            await revisions.create("guarded", [("cm", inline(config_map("guarded", namespace)))])
            blocked = await revisions.wait_for("guarded", "Progressing", "False", "Blocked")
        assert f"refusing to act as ServiceAccount {namespace}/{account}: " in blocked["message"]
        assert problem in blocked["message"]
        assert not await exists(admin_client, kinds.CONFIG_MAP, "guarded", namespace)
    finally:
        await revisions.cleanup()
        for gvk in (BINDING_KIND, POLICY_KIND):
            with contextlib.suppress(errors.NotFound):
                await admin_client.delete(gvk, name)
