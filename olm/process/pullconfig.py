"""Registry credentials and trust from the flags both processes share, kept current while they run.

- `--global-pull-secret <namespace>/<name>`: `follow_global_pull_secret` watches that one Secret
  (an informer in its namespace, field-selected by its name, so RBAC can grant `get`, `list` and
  `watch` on that name alone) and hands each version of it to the registry client
  (`oci.RegistryClient.use_keychain`): a created, changed or deleted Secret is used from the next
  request to a registry on, without a restart. A Secret with no `.dockerconfigjson` (or legacy
  `.dockercfg`) data, or data that is not a dockerconfigjson document, is logged and recorded as a
  Warning Event `InvalidPullSecret` regarding the Secret; pulls then go anonymous, as they do while
  the Secret does not exist.
- `--pull-cas-dir` (and operator-controller's `--catalogd-cas-dir`) are directories of PEM bundles
  that an `oci.TrustStore` reads: when a file in them changes, as a mounted ConfigMap's files do,
  the next connection trusts what the files hold now.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
from collections.abc import Mapping
from typing import Any

from olm import oci
from olm_runtime import cache, events, logging
from olm_runtime.client import kinds
from olm_runtime.manager import Manager

__all__ = ["GlobalPullSecret", "follow_global_pull_secret", "keychain_from", "secret_reference"]

_log = logging.get_logger("olm.process.pullconfig")

INVALID_REASON = "InvalidPullSecret"
"""Reason of the Warning Event regarding a global pull Secret that cannot be used."""
_UNSEEN = object()


def secret_reference(flag: str) -> tuple[str, str]:
    """`(namespace, name)` of a `--global-pull-secret` value; exits the process if it is malformed."""
    namespace, _, name = flag.rpartition("/")
    if not namespace or not name:
        raise SystemExit(f"--global-pull-secret must be <namespace>/<name>, not {flag!r}")
    return namespace, name


def keychain_from(secret: Mapping[str, Any] | None) -> tuple[oci.Keychain, str | None]:
    """The credentials of a dockerconfigjson Secret (anonymous when it is None), and why the Secret
    cannot be used when it cannot (then the keychain is empty)."""
    if secret is None:
        return oci.Keychain(), None
    data = secret.get("data") or {}
    raw = data.get(".dockerconfigjson") or data.get(".dockercfg")
    if not raw:
        return oci.Keychain(), "it has no .dockerconfigjson or .dockercfg data"
    try:
        document = base64.b64decode(raw, validate=True)
    except binascii.Error:
        return oci.Keychain(), "its data is not base64"
    try:
        return oci.Keychain.from_dockerconfigjson(document), None
    except oci.InvalidPullSecret as error:
        return oci.Keychain(), str(error)


class GlobalPullSecret:
    """Keeps a registry client's keychain equal to one Secret as an informer sees it; a runnable
    for every replica (each pulls)."""

    needs_leader_election = False
    name = "global-pull-secret"

    def __init__(
        self,
        namespace: str,
        name: str,
        informer: cache.Informer,
        registry: oci.RegistryClient,
        recorder: events.EventRecorder,
    ) -> None:
        self.namespace = namespace
        self.name = name
        self._informer = informer
        self._registry = registry
        self._recorder = recorder
        self._seen: object = _UNSEEN
        """The resourceVersion last applied; None once applied as absent."""

    @property
    def secret(self) -> str:
        return f"{self.namespace}/{self.name}"

    def refresh(self) -> None:
        """Apply the Secret as the informer holds it now (nothing to do if that was applied)."""
        found = self._informer.get(self.name, self.namespace)
        version = str(found["metadata"].get("resourceVersion", "")) if found is not None else None
        if version == self._seen:
            return  # a resync redelivers what was applied
        self._seen = version
        keychain, problem = keychain_from(found)
        self._registry.use_keychain(keychain)
        if found is None:
            _log.warning("pull_secret.missing", secret=self.secret)
        elif problem is not None:
            _log.warning("pull_secret.invalid", secret=self.secret, error=problem)
            regarding = {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {k: found["metadata"].get(k) for k in ("namespace", "name", "uid")},
            }
            self._recorder.event(
                regarding,
                events.WARNING,
                INVALID_REASON,
                f"the global pull secret {self.secret} cannot be used, pulls go anonymous: {problem}",
            )
        else:
            _log.info("pull_secret.loaded", secret=self.secret, registries=len(keychain))

    async def start(self) -> None:
        """Apply the Secret once the informer has its first state, so an absent one is reported
        too; the informer's handlers apply every change after that. Runs until cancelled."""
        await self._informer.wait_for_sync()
        self.refresh()
        await asyncio.Future()

    def handler(self) -> cache.EventHandlerFuncs:
        """Informer handlers that `refresh` on every add, update and delete."""
        return cache.EventHandlerFuncs(
            on_add=lambda _, __: self.refresh(),
            on_update=lambda _, __: self.refresh(),
            on_delete=lambda _: self.refresh(),
        )


async def follow_global_pull_secret(
    manager: Manager, flag: str | None, registry: oci.RegistryClient, component: str
) -> None:
    """Watch the `--global-pull-secret` (None when the flag is unset) with `manager`'s cache, and
    keep `registry` pulling with it; Events are recorded as `component`."""
    if not flag:
        return
    namespace, name = secret_reference(flag)
    informer = await manager.cache.get_informer(
        kinds.SECRET, namespaces=(namespace,), label_selector="", field_selector=f"metadata.name={name}"
    )
    follower = GlobalPullSecret(namespace, name, informer, registry, manager.event_recorder(component))
    informer.add_event_handler(follower.handler())
    manager.add(follower)
