"""Whether the admission policy that keeps requesters from naming a ServiceAccount they may not act
as is in force, before operator-controller acts as the account an object names.

operator-controller may request a token for any ServiceAccount. A ClusterExtension names the account
it is installed as in its spec, a ClusterObjectSet in its annotations, and whoever may write either
kind may write those names. The ValidatingAdmissionPolicies of `manifests/operator-controller/
identity-policies.yaml` admit a name only from a requester who may act as that account. A cluster
where they were never applied, or were deleted or weakened, gets a Blocked object that says so
instead of a confused deputy.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from olm_runtime import clock
from olm_runtime.client import Client, GroupVersionKind, errors

__all__ = ["IdentityPolicy"]

_POLICY = GroupVersionKind("admissionregistration.k8s.io", "v1", "ValidatingAdmissionPolicy")
_BINDING = GroupVersionKind("admissionregistration.k8s.io", "v1", "ValidatingAdmissionPolicyBinding")


class IdentityPolicy:
    """Whether the ValidatingAdmissionPolicy `name`, and its binding of the same name, are in force
    (an empty `name`: not checked, for clusters that enforce the rule by other means).

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

    async def refusal(self, action: str, account: tuple[str, str]) -> str | None:
        """Why the controller may not `action` (`install as`, `act as`) the ServiceAccount
        `(namespace, name)` now; None when the policy is in force, or not checked."""
        problem = await self.problem()
        if problem is None:
            return None
        namespace, name = account
        return (
            f"refusing to {action} ServiceAccount {namespace}/{name}: {problem}; it keeps requesters from "
            "naming a ServiceAccount they may not use themselves "
            "(apply manifests/operator-controller/identity-policies.yaml)"
        )

    async def problem(self) -> str | None:
        """Why the policy is not in force (None when it is, or when it is not checked)."""
        if not self._name or self._clock.now() < self._good_until:
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
            return f"its binding applies {what} to some objects only"
        return None


def _narrows(match: Mapping[str, Any]) -> bool:
    """Whether a binding's matchResources leaves some objects of the policy unchecked."""
    selectors = (match.get("objectSelector") or {}, match.get("namespaceSelector") or {})
    return any(s.get("matchLabels") or s.get("matchExpressions") for s in selectors) or bool(
        match.get("resourceRules") or match.get("excludeResourceRules")
    )
