"""Fuzz target: a revision's objects packed into Secrets and read back the way the ClusterObjectSet
controller reads them.

The bytes choose Kubernetes objects (kinds of every phase, names, namespaces, nested content from
tiny to larger than a Secret, duplicates). Promises checked:

- `pack` raises only `PackingError`;
- every Secret holds at most `max_secret_bytes` of data, every key is the hash of its value, every
  name fits the API's 253 characters, and no phase holds more than the API's 50 objects;
- the refs, resolved through `clusterobjectset.sources.decode_value`, give back exactly the objects
  that went in, and packing them in reverse order gives the same Secrets and phases.
"""

from __future__ import annotations

import base64
from typing import Any

import orjson

from hack.fuzz._input import Input
from olm.operator_controller import applier
from olm.operator_controller.applier.secrets import data_key
from olm.operator_controller.clusterobjectset import sources

OPTIONS = applier.PackingOptions(max_secret_bytes=4096, gzip_above_bytes=1024)
KINDS = (
    ("v1", "Namespace"),
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
    ("v1", "ServiceAccount"),
    ("rbac.authorization.k8s.io/v1", "ClusterRole"),
    ("v1", "ConfigMap"),
    ("apps/v1", "Deployment"),
    ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration"),
    ("example.com/v1", "Widget"),
    ("example.com/v1alpha1", "Gadget"),
)
NAMES = ("a", "b", "x" * 250, "")
LIMIT = 1 << 20

SEEDS = (bytes(range(64)), b"\x05" * 40, b"\x01\x07\x00\x02abc\x10\x03" * 8, b"\xff" * 30)


def _value(source: Input, depth: int) -> Any:
    kind = source.number(8)
    if depth > 3 or kind < 2:
        return source.text(24)
    if kind == 2:
        return source.number(1 << 32) - (1 << 31)
    if kind == 3:
        return source.choice((True, False, None))
    if kind == 4:
        return source.choice("ab") * (source.number(48) << 8)  # past the gzip threshold, or a Secret
    if kind == 5:
        return [_value(source, depth + 1) for _ in range(source.number(4))]
    return {source.text(8): _value(source, depth + 1) for _ in range(source.number(4))}


def objects(source: Input) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for _ in range(source.number(24)):
        if out and source.number(8) == 0:
            out.append(dict(source.choice(out)))  # the same object twice
            continue
        api_version, kind = source.choice(KINDS)
        metadata: dict[str, Any] = {"name": source.choice(NAMES) if source.number(2) else source.text(12)}
        if source.number(2):
            metadata["namespace"] = source.choice(("ns", "other"))
        out.append({"apiVersion": api_version, "kind": kind, "metadata": metadata, "data": _value(source, 0)})
    return out


def one_input(data: bytes) -> None:
    objs = objects(Input(data))
    try:
        packed = applier.pack("ext-1", "ext", objs, OPTIONS)
    except applier.PackingError:
        return
    stored: dict[tuple[str, str], bytes] = {}
    for secret in packed.secrets:
        assert len(secret["metadata"]["name"]) <= 253
        values = {key: base64.b64decode(value) for key, value in secret["data"].items()}
        assert sum(map(len, values.values())) <= OPTIONS.max_secret_bytes
        for key, raw in values.items():
            assert key == data_key(raw)
            stored[(secret["metadata"]["name"], key)] = raw
    resolved: list[dict[str, Any]] = []
    for phase in packed.phases:
        assert len(phase.refs) <= applier.MAX_OBJECTS_PER_PHASE
        for ref in phase.refs:
            raw = stored[(ref.name, ref.key)]
            resolved.append(sources.decode_value(raw, limit=LIMIT, where=ref.key))
    assert sorted(map(_canonical, resolved)) == sorted(map(_canonical, objs))
    assert applier.pack("ext-1", "ext", list(reversed(objs)), OPTIONS) == packed


def _canonical(obj: dict[str, Any]) -> bytes:
    return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS)
