"""Whose identity a revision's objects are written with: the ServiceAccount its annotations name.

Anyone who may create or patch a ClusterObjectSet may write those annotations, and operator-controller
may request a token for any ServiceAccount. What keeps a requester from naming an account it may not
act as itself is the ValidatingAdmissionPolicy of `manifests/operator-controller/
identity-policies.yaml`, enforced by the API server. `IdentityPolicy` checks, before the
controller acts as a named account, that the policy and its binding are installed and deny: a
cluster where they were never applied, or were deleted, gets a Blocked revision that says so instead
of a confused deputy.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from olm.api import names
from olm_runtime.client import Client

__all__ = [
    "IDENTITY_POLICY",
    "SERVICE_ACCOUNT_NAME",
    "SERVICE_ACCOUNT_NAMESPACE",
    "Identity",
    "MissingIdentity",
    "identity_for",
    "named_account",
]

SERVICE_ACCOUNT_NAME = names.SERVICE_ACCOUNT_NAME_ANNOTATION
SERVICE_ACCOUNT_NAMESPACE = names.SERVICE_ACCOUNT_NAMESPACE_ANNOTATION
IDENTITY_POLICY: Final = "olm-clusterobjectset-identity"
"""Name of the shipped ValidatingAdmissionPolicy (and of its binding) that guards the annotations."""


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
