"""ServiceAccount tokens from TokenRequest authenticate, and RBAC decides what they may do."""

from __future__ import annotations

import ssl

import aiohttp
from kubernetes_asyncio import client

from olm_runtime.testing.controlplane import ControlPlane
from olm_runtime.testing.poll import eventually


async def _list_configmaps(control_plane: ControlPlane, token: str, namespace: str) -> tuple[int, str]:
    context = ssl.create_default_context(cafile=str(control_plane.ca_file))
    async with aiohttp.ClientSession() as session:
        url = f"{control_plane.server}/api/v1/namespaces/{namespace}/configmaps"
        async with session.get(url, headers={"Authorization": f"Bearer {token}"}, ssl=context) as response:
            return response.status, await response.text()


async def test_token_request_token_authenticates_and_rbac_grants_only_what_is_bound(
    api_client: client.ApiClient, control_plane: ControlPlane, namespace: str
) -> None:
    core = client.CoreV1Api(api_client)
    rbac = client.RbacAuthorizationV1Api(api_client)
    # Bodies are plain dicts, which the client serializes as-is; its stubs accept only the model classes.
    await core.create_namespaced_service_account(namespace, {"metadata": {"name": "reader"}})  # type: ignore[arg-type]
    request = await core.create_namespaced_service_account_token(
        "reader",
        namespace,
        {"spec": {"audiences": [], "expirationSeconds": 600}},  # type: ignore[arg-type]
    )
    token = request.status.token

    status, body = await _list_configmaps(control_plane, token, namespace)
    assert status == 403, body
    assert f"system:serviceaccount:{namespace}:reader" in body  # authenticated, then denied

    await rbac.create_namespaced_role(
        namespace,
        {"metadata": {"name": "read-configmaps"},  # type: ignore[arg-type]
         "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}]},
    )  # fmt: skip
    await rbac.create_namespaced_role_binding(
        namespace,
        {  # type: ignore[arg-type]
            "metadata": {"name": "reader"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "read-configmaps"},
            "subjects": [{"kind": "ServiceAccount", "name": "reader", "namespace": namespace}],
        },
    )

    async def allowed() -> bool:
        return (await _list_configmaps(control_plane, token, namespace))[0] == 200

    await eventually(allowed, what="the RoleBinding to take effect")
    status, _ = await _list_configmaps(control_plane, token, "default")
    assert status == 403  # the Role is namespaced: other namespaces stay closed


async def test_an_invalid_token_is_unauthenticated(control_plane: ControlPlane, namespace: str) -> None:
    status, _ = await _list_configmaps(control_plane, "not-a-token", namespace)
    assert status == 401
