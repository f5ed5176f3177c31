"""Externalising a revision's objects into immutable, content-addressed Secrets.

Every object is encoded as compact JSON with sorted keys; one larger than `gzip_above_bytes` is
gzip-compressed (fixed header, so the bytes depend on the content only). Its data key is the
unpadded base64url SHA-256 of the stored bytes (43 characters), so identical objects share one
key and any change to an object changes its key, and so the ClusterObjectSet's spec. Objects are
packed in phase order into Secrets of at most `max_secret_bytes` of data; a Secret's name is the
revision's name plus 16 hex characters of a hash over its keys and values. The same objects
therefore always give the same Secrets and refs, which makes re-creating them after a crash a
no-op (the API answers AlreadyExists).
"""

from __future__ import annotations

import base64
import gzip
import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import orjson

from olm.api import names
from olm.operator_controller.applier.phases import group_kind, sort_into_phases

__all__ = [
    "MAX_OBJECTS_PER_PHASE",
    "MAX_SECRET_DATA_BYTES",
    "PackedPhase",
    "PackedRevision",
    "PackingError",
    "PackingOptions",
    "SecretKeyRef",
    "decode_object",
    "encode_object",
    "pack",
]

MAX_SECRET_DATA_BYTES: Final = 900 * 1024
"""Data bytes per Secret: under etcd's 1.5 MiB request limit with room for metadata."""
MAX_OBJECTS_PER_PHASE: Final = 50
"""The ClusterObjectSet API's limit on objects per phase."""
_NAME_MAX: Final = 253
_HASH_CHARS: Final = 16
_GZIP_MAGIC: Final = b"\x1f\x8b"


class PackingError(Exception):
    """The objects cannot be stored as a revision (an object too large even compressed, a phase
    with too many objects); the bundle must change, so retrying does not help."""


@dataclass(frozen=True, kw_only=True)
class PackingOptions:
    """Where the Secrets go and how full they get."""

    system_namespace: str = names.DEFAULT_SYSTEM_NAMESPACE
    """Namespace of the Secrets (OLM's own)."""
    max_secret_bytes: int = MAX_SECRET_DATA_BYTES
    """Most data bytes (sum of values, before base64) one Secret holds."""
    gzip_above_bytes: int = MAX_SECRET_DATA_BYTES
    """Objects whose JSON is larger than this are stored gzip-compressed."""
    gzip_level: int = 9
    """zlib level for compressed objects."""


@dataclass(frozen=True)
class SecretKeyRef:
    """One object of a revision: a data key of one of its Secrets."""

    name: str
    namespace: str
    key: str


@dataclass(frozen=True)
class PackedPhase:
    name: str
    refs: tuple[SecretKeyRef, ...]

    def spec(self) -> dict[str, Any]:
        """The phase as an entry of a ClusterObjectSet's `spec.phases`."""
        return {
            "name": self.name,
            "objects": [{"ref": {"name": r.name, "namespace": r.namespace, "key": r.key}} for r in self.refs],
        }


@dataclass(frozen=True, kw_only=True)
class PackedRevision:
    """What to create for a revision: the Secrets first, then a ClusterObjectSet with `phases`."""

    secrets: tuple[dict[str, Any], ...]
    """Secret manifests (`data` base64-encoded, `immutable: true`), without ownerReferences."""
    phases: tuple[PackedPhase, ...]
    """The revision's phases, every object a `ref` into one of `secrets`."""


def encode_object(obj: Mapping[str, Any], options: PackingOptions) -> bytes:
    """The bytes stored for `obj`: compact sorted JSON, gzip-compressed when large."""
    data = orjson.dumps(obj, option=orjson.OPT_SORT_KEYS)
    if len(data) > options.gzip_above_bytes:
        data = gzip.compress(data, compresslevel=options.gzip_level, mtime=0)
    return data


def decode_object(data: bytes) -> dict[str, Any]:
    """The object `encode_object` stored as `data`. (The ClusterObjectSet controller reads the
    same format with its own, bounded decoder: it may import nothing of this pipeline.)"""
    parsed: dict[str, Any] = orjson.loads(gzip.decompress(data) if data[:2] == _GZIP_MAGIC else data)
    return parsed


def data_key(data: bytes) -> str:
    """Unpadded base64url of the SHA-256 of `data` (43 characters)."""
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def pack(
    revision_name: str,
    owner_name: str,
    objects: Iterable[Mapping[str, Any]],
    options: PackingOptions | None = None,
) -> PackedRevision:
    """Sort `objects` into phases and store each in a Secret; raises `PackingError`.

    `revision_name` is the ClusterObjectSet's name (`<extension>-<n>`); `owner_name` the
    ClusterExtension's. Both go into the Secrets' labels, which is how orphans of a revision that
    was never created are found.
    """
    options = options or PackingOptions()
    phases = sort_into_phases(objects)
    bins: list[dict[str, bytes]] = [{}]
    placed: dict[str, int] = {}
    layout: list[tuple[str, list[str]]] = []
    for phase_index, (phase, members) in enumerate(phases):
        if len(members) > MAX_OBJECTS_PER_PHASE:
            raise PackingError(
                f'phase "{phase}" has {len(members)} objects; a ClusterObjectSet phase holds at most '
                f"{MAX_OBJECTS_PER_PHASE}"
            )
        keys: list[str] = []
        for index, obj in enumerate(members):
            data = encode_object(obj, options)
            if len(data) > options.max_secret_bytes:
                raise PackingError(
                    f'object in phase "{phase}" ({phase_index}) index {index}, {_describe(obj)}, is '
                    f"{len(data)} bytes after gzip compression, more than the {options.max_secret_bytes} "
                    "bytes a Secret can hold"
                )
            key = data_key(data)
            keys.append(key)
            if key in placed:
                continue  # an identical object is stored once
            current = bins[-1]
            if current and sum(map(len, current.values())) + len(data) > options.max_secret_bytes:
                current = {}
                bins.append(current)
            current[key] = data
            placed[key] = len(bins) - 1
        layout.append((phase, keys))
    if not bins[-1]:
        bins.pop()
    secret_names = [_secret_name(revision_name, content) for content in bins]
    secrets = tuple(
        _secret(name, revision_name, owner_name, content, options)
        for name, content in zip(secret_names, bins, strict=True)
    )
    cos_phases = tuple(
        PackedPhase(
            phase,
            tuple(SecretKeyRef(secret_names[placed[key]], options.system_namespace, key) for key in keys),
        )
        for phase, keys in layout
    )
    return PackedRevision(secrets=secrets, phases=cos_phases)


def _secret_name(revision_name: str, content: Mapping[str, bytes]) -> str:
    digest = hashlib.sha256()
    for key in sorted(content):
        digest.update(key.encode())
        digest.update(b"\0")
        digest.update(content[key])
        digest.update(b"\0")
    prefix = revision_name[: _NAME_MAX - _HASH_CHARS - 1].rstrip("-.")
    return f"{prefix}-{digest.hexdigest()[:_HASH_CHARS]}"


def _secret(
    name: str, revision_name: str, owner_name: str, content: Mapping[str, bytes], options: PackingOptions
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": name,
            "namespace": options.system_namespace,
            "labels": {
                names.OWNER_KIND_LABEL: names.CLUSTER_EXTENSION,
                names.OWNER_NAME_LABEL: owner_name,
                names.REVISION_NAME_LABEL: revision_name,
            },
        },
        "type": names.OBJECT_DATA_SECRET_TYPE,
        "immutable": True,
        "data": {key: base64.b64encode(content[key]).decode() for key in sorted(content)},
    }


def _describe(obj: Mapping[str, Any]) -> str:
    metadata = obj.get("metadata") or {}
    where = f"{metadata.get('namespace')}/" if metadata.get("namespace") else ""
    return f"{group_kind(obj)} {where}{metadata.get('name', '')}"
