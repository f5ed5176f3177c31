"""Resolving the objects of a revision: inline, or referenced in Secrets (JSON, maybe gzip).

Every object of every phase is resolved before anything is applied, so a bad source never leaves
a revision half rolled out. The outcomes a user can cause are typed:

- `SourceMissing` (retryable): a referenced Secret or key does not exist (yet);
- `SourceInvalid` (blocked): a value that is not a JSON object, or is too large when decompressed;
- `MutableSecrets` (blocked): referenced Secrets without `immutable: true`.

`phase_digest` fingerprints a phase's resolved content; the digests recorded on the first
reconcile (`status.observedPhases`) detect a referenced Secret replaced with other content.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import zlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

__all__ = [
    "GZIP_MAGIC",
    "Decoded",
    "MutableSecrets",
    "ResolvedObject",
    "ResolvedPhase",
    "SourceError",
    "SourceInvalid",
    "SourceMissing",
    "changed_phases",
    "decode_value",
    "phase_digest",
    "resolve_phases",
]

GZIP_MAGIC = b"\x1f\x8b"
SecretGetter = Callable[[str, str], Awaitable[Mapping[str, Any] | None]]
"""`(namespace, name) -> Secret or None when it does not exist`."""


class SourceError(Exception):
    """An object source could not be resolved."""


class SourceMissing(SourceError):
    """A referenced Secret or key does not exist; retried."""


class SourceInvalid(SourceError):
    """A referenced value is not a usable manifest; needs a fix."""


class MutableSecrets(SourceError):
    """Referenced Secrets are not immutable; needs a fix."""

    def __init__(self, secrets: Sequence[str]) -> None:
        self.secrets = tuple(sorted(secrets))
        super().__init__(
            "the following secrets are not immutable (referenced secrets must have immutable set to "
            f"true): {', '.join(self.secrets)}"
        )


@dataclass(frozen=True)
class ResolvedObject:
    """One object of a phase with its source and effective collision protection resolved."""

    manifest: dict[str, Any]
    collision_protection: str
    source: str
    """Where it came from, for messages: `inline` or `secret ns/name key k`."""


@dataclass(frozen=True)
class ResolvedPhase:
    name: str
    objects: tuple[ResolvedObject, ...]
    digest: str = field(default="")


@dataclass
class Decoded:
    """What `resolve_phases` decoded from Secrets, for its next call on the same revision. The
    Secrets are immutable, so a value read again under the same uid and resourceVersion decodes to
    the same manifest, and a phase of the same sources has the same digest. A revision rolling out
    is resolved again on every event of its objects until its probes pass: decoding sailoperator's
    19 CRDs each time took a fifth of operator-controller's CPU during its install. The manifests
    are shared between the calls: callers must not change them."""

    manifests: dict[tuple[str, str, str], dict[str, Any]] = field(default_factory=dict)
    """(Secret uid, resourceVersion, key) -> the manifest."""
    secrets: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)
    """(namespace, name) -> (uid, resourceVersion) of the immutable Secret read under that name.
    A later call takes that Secret's values from `manifests` without reading it again: the memo
    lives only until the revision succeeds, so what the rollout applies is what it read and
    recorded the digests of first; a Secret swapped under the same name meanwhile is found by the
    first read after that (`changed_phases`), before anything of it is applied. A GET of a revision's
    Secrets on every event of its objects was a tenth of operator-controller's CPU during installs."""
    digests: dict[tuple[Any, ...], str] = field(default_factory=dict)
    """(phase name, each object's (Secret uid, resourceVersion, key, collision protection)) ->
    the phase's digest; phases with inline objects are not kept."""

    def recall(
        self, namespace: str, name: str, key: str
    ) -> tuple[tuple[str, str, str], dict[str, Any]] | None:
        """The manifest under `key` of the Secret read as `namespace/name` before, with its
        (uid, resourceVersion, key); None when it was not."""
        read_before = self.secrets.get((namespace, name))
        if read_before is None or (manifest := self.manifests.get((*read_before, key))) is None:
            return None
        return (*read_before, key), manifest

    def keep(
        self, namespace: str, name: str, key_of_value: tuple[str, str, str], manifest: dict[str, Any]
    ) -> None:
        """Remember `manifest`, decoded from the immutable Secret `namespace/name`."""
        self.manifests[key_of_value] = manifest
        self.secrets[(namespace, name)] = key_of_value[:2]


def decode_value(raw: bytes, *, limit: int, where: str) -> dict[str, Any]:
    """A manifest from a Secret value: gunzipped when it starts with the gzip magic (at most
    `limit` bytes once decompressed), then parsed as a JSON object."""
    data = raw
    if raw[:2] == GZIP_MAGIC:
        inflater = zlib.decompressobj(wbits=31)
        try:
            data = inflater.decompress(raw, limit + 1)
        except zlib.error as e:
            raise SourceInvalid(f"{where}: invalid gzip data: {e}") from e
        if len(data) > limit or inflater.unconsumed_tail:
            raise SourceInvalid(f"{where}: decompressed manifest exceeds the limit of {limit} bytes")
    elif len(raw) > limit:
        raise SourceInvalid(f"{where}: manifest exceeds the limit of {limit} bytes")
    try:
        parsed = orjson.loads(data)
    except orjson.JSONDecodeError as e:
        raise SourceInvalid(f"{where}: not valid JSON: {e}") from e
    if not isinstance(parsed, dict) or not parsed.get("apiVersion") or not parsed.get("kind"):
        raise SourceInvalid(f"{where}: not a Kubernetes object (apiVersion and kind are required)")
    return parsed


def _effective(spec: Mapping[str, Any], phase: Mapping[str, Any], entry: Mapping[str, Any]) -> str:
    """Collision protection: the object's, else the phase's, else the spec's, else Prevent."""
    return str(
        entry.get("collisionProtection")
        or phase.get("collisionProtection")
        or spec.get("collisionProtection")
        or "Prevent"
    )


def phase_digest(name: str, objects: Sequence[ResolvedObject]) -> str:
    """`sha256:<hex>` over the phase name and its resolved manifests (key order ignored)."""
    payload = {
        "name": name,
        "objects": [{"object": o.manifest, "collisionProtection": o.collision_protection} for o in objects],
    }
    return "sha256:" + hashlib.sha256(orjson.dumps(payload, option=orjson.OPT_SORT_KEYS)).hexdigest()


async def resolve_phases(
    spec: Mapping[str, Any],
    get_secret: SecretGetter,
    *,
    system_namespace: str,
    limit: int,
    decoded: Decoded | None = None,
) -> list[ResolvedPhase]:
    """Resolve every object of every phase; each Secret is read once. With `decoded`, what an
    earlier call on the same revision decoded is reused, and what this one decodes is kept there."""
    secrets: dict[tuple[str, str], Mapping[str, Any] | None] = {}
    mutable: set[str] = set()

    async def value(
        namespace: str, name: str, key: str, phase: str, where: str
    ) -> tuple[tuple[str, str, str], dict[str, Any]]:
        """The manifest under `key` of Secret `namespace/name`, with the (uid, resourceVersion, key)
        of the Secret it was read from."""
        if decoded is not None and (recalled := decoded.recall(namespace, name, key)) is not None:
            return recalled
        if (namespace, name) not in secrets:
            secrets[(namespace, name)] = await get_secret(namespace, name)
        secret = secrets[(namespace, name)]
        if secret is None:
            raise SourceMissing(f'referenced secret {namespace}/{name} of phase "{phase}" not found')
        if not secret.get("immutable"):
            mutable.add(f"{namespace}/{name}")
        encoded = (secret.get("data") or {}).get(key)
        if encoded is None:
            raise SourceMissing(f'key {key} not found in secret {namespace}/{name} of phase "{phase}"')
        meta = secret.get("metadata") or {}
        key_of_value = (str(meta.get("uid")), str(meta.get("resourceVersion")), key)
        if decoded is not None and (manifest := decoded.manifests.get(key_of_value)) is not None:
            return key_of_value, manifest
        try:
            raw = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError) as e:
            raise SourceInvalid(f"{where}: value is not base64") from e
        manifest = decode_value(raw, limit=limit, where=where)
        if decoded is not None and secret.get("immutable"):
            decoded.keep(namespace, name, key_of_value, manifest)
        return key_of_value, manifest

    resolved: list[ResolvedPhase] = []
    for phase in spec.get("phases") or ():
        objects: list[ResolvedObject] = []
        keys: list[tuple[str, ...]] | None = []
        for entry in phase.get("objects") or ():
            protection = _effective(spec, phase, entry)
            if entry.get("object") is not None:
                objects.append(ResolvedObject(dict(entry["object"]), protection, "inline"))
                keys = None
                continue
            ref = entry.get("ref") or {}
            namespace = ref.get("namespace") or system_namespace
            name, key = str(ref.get("name", "")), str(ref.get("key", ""))
            where = f"secret {namespace}/{name} key {key}"
            key_of_value, manifest = await value(namespace, name, key, str(phase["name"]), where)
            objects.append(ResolvedObject(manifest, protection, where))
            if keys is not None:
                keys.append((*key_of_value, protection))
        name = str(phase["name"])
        digest_key = (name, *keys) if decoded is not None and keys is not None else None
        digest = decoded.digests.get(digest_key) if decoded is not None and digest_key else None
        if digest is None:
            digest = phase_digest(name, objects)
            if decoded is not None and digest_key is not None and not mutable:
                decoded.digests[digest_key] = digest
        resolved.append(ResolvedPhase(name, tuple(objects), digest))
    if mutable:
        raise MutableSecrets(sorted(mutable))
    return resolved


def changed_phases(phases: Sequence[ResolvedPhase], observed: Sequence[Mapping[str, Any]]) -> str | None:
    """A message naming the phases whose digest differs from `observed`, or None when all match."""
    recorded = {str(o.get("name")): str(o.get("digest")) for o in observed}
    changes = [
        f'phase "{p.name}" (expected digest {recorded[p.name]}, got {p.digest})'
        for p in phases
        if p.name in recorded and recorded[p.name] != p.digest
    ]
    if not changes:
        return None
    return (
        f"resolved content of {len(changes)} phase(s) has changed: {'; '.join(changes)}; a referenced "
        "object source may have been deleted and recreated with different content"
    )
