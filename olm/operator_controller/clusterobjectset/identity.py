"""Whose identity a revision's objects are written with: the ServiceAccount its annotations name.

Anyone who may create or patch a ClusterObjectSet may write those annotations, and operator-controller
may request a token for any ServiceAccount. What keeps a requester from naming an account it may not
act as itself is the ValidatingAdmissionPolicy of `manifests/operator-controller/
clusterobjectset-identity.yaml`, enforced by the API server. `IdentityPolicy` checks, before the
controller acts as a named account, that the policy and its binding are installed and deny: a
cluster where they were never applied, or were deleted, gets a Blocked revision that says so instead
of a confused deputy.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from olm.api import names
from olm_runtime import clock
from olm_runtime.client import Client, GroupVersionKind, errors

__all__ = [
    "IDENTITY_POLICY",
    "SERVICE_ACCOUNT_NAME",
    "SERVICE_ACCOUNT_NAMESPACE",
    "Identity",
    "IdentityPolicy",
    "MissingIdentity",
    "identity_for",
    "named_account",
]

SERVICE_ACCOUNT_NAME = names.SERVICE_ACCOUNT_NAME_ANNOTATION
SERVICE_ACCOUNT_NAMESPACE = names.SERVICE_ACCOUNT_NAMESPACE_ANNOTATION
IDENTITY_POLICY: Final = "olm-clusterobjectset-identity"
"""Name of the shipped ValidatingAdmissionPolicy and of its binding."""

_POLICY = GroupVersionKind("admissionregistration.k8s.io", "v1", "ValidatingAdmissionPolicy")
_BINDING = GroupVersionKind("admissionregistration.k8s.io", "v1", "ValidatingAdmissionPolicyBinding")


class MissingIdentity(Exception):
    """The revision names no ServiceAccount and the controller may not use its own identity."""


@dataclass(frozen=True)
class Identity:
    client: Client
    description: str
    """For messages: `ServiceAccount ns/name` or `the controller's own identity`."""


def named_account(cos: Mapping[str, Any]) -> tuple[str, str] | None:
    """`(namespace, name)` of the ServiceAccount the revision's annotations name, if both are set."""
    annotations = (cos.get("metadata") or {}).get("annotations") or {}
    name, namespace = annotations.get(SERVICE_ACCOUNT_NAME), annotations.get(SERVICE_ACCOUNT_NAMESPACE)
    return (namespace, name) if name and namespace else None


def identity_for(cos: Mapping[str, Any], root: Client, *, allow_own_identity: bool) -> Identity:
    account = named_account(cos)
    if account:
        namespace, name = account
        return Identity(root.for_service_account(namespace, name), f"ServiceAccount {namespace}/{name}")
    if allow_own_identity:
        return Identity(root, "the controller's own identity")
    raise MissingIdentity(
        "the revision names no ServiceAccount to apply its objects as: add the annotations "
        f"{SERVICE_ACCOUNT_NAME} and {SERVICE_ACCOUNT_NAMESPACE}"
    )


class IdentityPolicy:
    """Whether the admission policy that guards the ServiceAccount annotations is in force.

    A positive answer is kept for `ttl` seconds, so a busy controller reads the two objects about
    once a minute; a negative one is not kept, so a fix is seen by the next reconcile."""

    def __init__(
        self, client: Client, name: str, *, ttl: float = 60.0, now: clock.Clock = clock.REAL
    ) -> None:
        self._client = client
        self._name = name
        self._ttl = ttl
        self._clock = now
        self._good_until = float("-inf")

    async def problem(self) -> str | None:
        """Why the policy is not in force (None when it is)."""
        if self._clock.now() < self._good_until:
            return None
        found = await self._read()
        if found is None:
            self._good_until = self._clock.now() + self._ttl
        return found

    async def _read(self) -> str | None:
        what = f"ValidatingAdmissionPolicy {self._name}"
        try:
            policy = await self._client.get(_POLICY, self._name)
            binding = await self._client.get(_BINDING, self._name)
        except errors.NotFound as e:
            return f"{what} or its binding is not installed ({e.message})"
        except errors.Forbidden as e:
            return f"cannot read {what} and its binding: {e.message}"
        if (policy.get("spec") or {}).get("failurePolicy", "Fail") != "Fail":
            return f"{what} has failurePolicy {policy['spec']['failurePolicy']}, not Fail"
        spec = binding.get("spec") or {}
        if spec.get("policyName") != self._name or "Deny" not in (spec.get("validationActions") or []):
            return f"its binding does not bind {what} with validationActions Deny"
        if _narrows(spec.get("matchResources") or {}):
            return f"its binding applies {what} to some ClusterObjectSets only"
        return None


def _narrows(match: Mapping[str, Any]) -> bool:
    """Whether a binding's matchResources leaves some ClusterObjectSets unchecked."""
    selectors = (match.get("objectSelector") or {}, match.get("namespaceSelector") or {})
    return any(s.get("matchLabels") or s.get("matchExpressions") for s in selectors) or bool(
        match.get("resourceRules") or match.get("excludeResourceRules")
    )
