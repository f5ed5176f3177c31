"""Whose identity a revision's objects are written with: the ServiceAccount its annotations name."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from olm.api import names
from olm_runtime.client import Client

__all__ = ["SERVICE_ACCOUNT_NAME", "SERVICE_ACCOUNT_NAMESPACE", "Identity", "MissingIdentity", "identity_for"]

SERVICE_ACCOUNT_NAME = names.SERVICE_ACCOUNT_NAME_ANNOTATION
SERVICE_ACCOUNT_NAMESPACE = names.SERVICE_ACCOUNT_NAMESPACE_ANNOTATION


class MissingIdentity(Exception):
    """The revision names no ServiceAccount and the controller may not use its own identity."""


@dataclass(frozen=True)
class Identity:
    client: Client
    description: str
    """For messages: `ServiceAccount ns/name` or `the controller's own identity`."""


def identity_for(cos: Mapping[str, Any], root: Client, *, allow_own_identity: bool) -> Identity:
    annotations = (cos.get("metadata") or {}).get("annotations") or {}
    name, namespace = annotations.get(SERVICE_ACCOUNT_NAME), annotations.get(SERVICE_ACCOUNT_NAMESPACE)
    if name and namespace:
        return Identity(root.for_service_account(namespace, name), f"ServiceAccount {namespace}/{name}")
    if allow_own_identity:
        return Identity(root, "the controller's own identity")
    raise MissingIdentity(
        "the revision names no ServiceAccount to apply its objects as: add the annotations "
        f"{SERVICE_ACCOUNT_NAME} and {SERVICE_ACCOUNT_NAMESPACE}"
    )
