"""A ServiceAccount without the permissions a bundle needs: the permission preflight reports every
missing permission at once and creates nothing; granting exactly what it asked for lets the
extension install on its own, without a spec change."""

from __future__ import annotations

import contextlib
import re
from typing import Any

import pytest

from e2e.operator_controller.conftest import SYSTEM_NAMESPACE, Extensions, ServedCatalog
from olm.api import names
from olm.api.kinds import CLUSTER_OBJECT_SET
from olm_runtime import conditions
from olm_runtime.client import Client, errors, kinds
from olm_testkit.names import unique

PREAUTH = "pre-authorization failed: service account requires the following permissions"
LINE = re.compile(
    r'^Namespace:"(?P<namespace>[^"]*)" APIGroups:\[(?P<group>[^\]]*)\] Resources:\[(?P<resource>[^\]]*)\]'
    r"(?: ResourceNames:\[(?P<name>[^\]]*)\])? Verbs:\[(?P<verbs>[^\]]*)\]$"
)
URL_LINE = re.compile(r'^Namespace:"" Verbs:\[(?P<verbs>[^\]]*)\] NonResourceURLs:\[(?P<url>[^\]]*)\]$')


def permission_lines(message: str) -> list[str]:
    """The permission lines of a pre-authorization message, in the order written."""
    head, _, body = message.partition(":\n  ")
    assert head.endswith(f"{PREAUTH} to manage cluster extension"), message
    return body.split("\n  ")


def rule_of(line: str) -> dict[str, Any]:
    """The PolicyRule granting exactly one line of the message."""
    if url := URL_LINE.match(line):
        return {"nonResourceURLs": [url["url"]], "verbs": url["verbs"].split(",")}
    match = LINE.match(line)
    assert match is not None, f"not a permission line: {line!r}"
    rule: dict[str, Any] = {
        "apiGroups": [match["group"]],
        "resources": [match["resource"]],
        "verbs": match["verbs"].split(","),
    }
    if match["name"]:
        rule["resourceNames"] = [match["name"]]
    return rule


async def owned(kube: Client, extension: str) -> tuple[list[str], list[str]]:
    """The names of the extension's ClusterObjectSets and of its content Secrets."""
    selector = f"{names.OWNER_NAME_LABEL}={extension}"
    revisions = await kube.list(CLUSTER_OBJECT_SET, label_selector=selector)
    secrets = await kube.list(kinds.SECRET, namespace=SYSTEM_NAMESPACE, label_selector=selector)
    return (
        [r["metadata"]["name"] for r in revisions.items],
        [s["metadata"]["name"] for s in secrets.items],
    )


async def test_missing_permissions_are_listed_then_granted(
    namespace: str, extensions: Extensions, fixture_catalog: ServedCatalog
) -> None:
    kube = extensions.kube
    account = unique("bare")
    await kube.create(
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": account, "namespace": namespace}}
    )
    name = unique("perms")
    await extensions.create(
        name, "test", namespace, account, version="1.0.0", selector={"matchLabels": fixture_catalog.label}
    )
    found = await extensions.wait_condition(
        name, "Progressing", "True", reason="Retrying", message_contains=PREAUTH, timeout=180
    )
    message = conditions.of(found, "Progressing")["message"]
    bundle = 'error for resolved bundle "test-operator.1.0.0" with version "1.0.0": '
    assert message.startswith(bundle + PREAUTH), message
    lines = permission_lines(message.removeprefix(bundle))
    assert lines == sorted(lines)
    assert len(lines) == len(set(lines))
    ns = f'Namespace:"{namespace}"'
    for line in (
        'Namespace:"" APIGroups:[apiextensions.k8s.io] Resources:[customresourcedefinitions] '
        "ResourceNames:[olme2etests.olm.operatorframework.io] Verbs:[delete,get,patch,update]",
        'Namespace:"" APIGroups:[apiextensions.k8s.io] Resources:[customresourcedefinitions] Verbs:[create]',
        'Namespace:"" APIGroups:[authentication.k8s.io] Resources:[tokenreviews] Verbs:[create]',
        'Namespace:"" APIGroups:[rbac.authorization.k8s.io] Resources:[clusterroles] Verbs:[create]',
        f"{ns} APIGroups:[apps] Resources:[deployments] ResourceNames:[test-operator] "
        "Verbs:[delete,get,patch,update]",
        f"{ns} APIGroups:[apps] Resources:[deployments] Verbs:[create]",
        f"{ns} APIGroups:[] Resources:[configmaps] ResourceNames:[test-configmap] "
        "Verbs:[delete,get,patch,update]",
        f"{ns} APIGroups:[] Resources:[serviceaccounts] ResourceNames:[simple-bundle-manager] "
        "Verbs:[delete,get,patch,update]",
    ):
        assert line in lines, f"{line!r} not in:\n" + "\n".join(lines)
    assert conditions.of(found, "Installed")["status"] == "False"
    assert await owned(kube, name) == ([], [])

    # Grant exactly the lines: cluster-wide ones with a ClusterRole, the namespace's with a Role.
    cluster_rules = [rule_of(line) for line in lines if line.startswith('Namespace:"" ')]
    namespaced_rules = [rule_of(line) for line in lines if line.startswith(f"{ns} ")]
    assert len(cluster_rules) + len(namespaced_rules) == len(lines), lines
    subject = {"kind": "ServiceAccount", "name": account, "namespace": namespace}
    rbac = "rbac.authorization.k8s.io/v1"
    try:
        await kube.create(
            {"apiVersion": rbac, "kind": "ClusterRole", "metadata": {"name": account}, "rules": cluster_rules}
        )
        await kube.create(
            {
                "apiVersion": rbac,
                "kind": "Role",
                "metadata": {"name": account, "namespace": namespace},
                "rules": namespaced_rules,
            }
        )
        await kube.create(
            {
                "apiVersion": rbac,
                "kind": "RoleBinding",
                "metadata": {"name": account, "namespace": namespace},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": account},
                "subjects": [subject],
            }
        )
        await kube.create(
            {
                "apiVersion": rbac,
                "kind": "ClusterRoleBinding",
                "metadata": {"name": account},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": account},
                "subjects": [subject],
            }
        )
        generation = found["metadata"]["generation"]
        found = await extensions.wait_condition(name, "Installed", "True", reason="Succeeded", timeout=180)
        assert found["metadata"]["generation"] == generation  # no spec change was needed
        assert found["status"]["install"]["bundle"] == {"name": "test-operator.1.0.0", "version": "1.0.0"}
        await extensions.wait_condition(name, "Progressing", "True", reason="Succeeded")
        revisions, secrets = await owned(kube, name)
        assert revisions == [f"{name}-1"]
        assert secrets
        await kube.get(kinds.DEPLOYMENT, "test-operator", namespace=namespace)
        # The same permissions suffice to remove what was installed.
        await extensions.delete_and_wait_gone(name)
        with pytest.raises(errors.NotFound):
            await kube.get(kinds.DEPLOYMENT, "test-operator", namespace=namespace)
    finally:
        with contextlib.suppress(errors.NotFound):
            await kube.delete(kinds.CLUSTER_ROLE_BINDING, account)
        with contextlib.suppress(errors.NotFound):
            await kube.delete(kinds.CLUSTER_ROLE, account)
