"""Secret packing: content-addressed, bounded, gzip for large objects, deterministic, refs resolve."""

from __future__ import annotations

import base64
import gzip
import hashlib
import random
from collections.abc import Mapping, Sequence
from typing import Any

import orjson
import pytest

from olm.api import names
from olm.api.clusterobjectset import ClusterObjectSetSpec
from olm.operator_controller import applier
from olm.pipeline import render
from unit import realdata

NS = "olmv1-system"


def _cm(name: str, size: int = 10, namespace: str = "app") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
        "data": {"blob": "x" * size},
    }


def _noise(name: str, size: int) -> dict[str, Any]:
    """An object whose JSON does not compress: random-looking text."""
    noise = random.Random(name).randbytes(size)
    return {**_cm(name), "data": {"blob": base64.b64encode(noise).decode()[:size]}}


def _resolve(packed: applier.PackedRevision) -> list[tuple[str, list[dict[str, Any]]]]:
    """Read every ref back the way the ClusterObjectSet controller does (gzip sniffed by magic)."""
    by_name = {s["metadata"]["name"]: s for s in packed.secrets}
    out = []
    for phase in packed.phases:
        objects = []
        for ref in phase.refs:
            secret = by_name[ref.name]
            assert ref.namespace == secret["metadata"]["namespace"]
            raw = base64.b64decode(secret["data"][ref.key])
            if raw[:2] == b"\x1f\x8b":
                raw = gzip.decompress(raw)
            objects.append(orjson.loads(raw))
        out.append((phase.name, objects))
    return out


def _data_bytes(secret: Mapping[str, Any]) -> int:
    return sum(len(base64.b64decode(v)) for v in secret["data"].values())


def test_refs_resolve_to_the_objects_in_phase_order() -> None:
    objects = [_cm("b"), _cm("a"), {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}}]
    packed = applier.pack("ext-1", "ext", objects)
    assert _resolve(packed) == [(n, [dict(o) for o in objs]) for n, objs in applier.sort_into_phases(objects)]


def test_secrets_are_immutable_typed_labelled_in_the_system_namespace() -> None:
    packed = applier.pack("ext-3", "ext", [_cm("a")], applier.PackingOptions(system_namespace="olm"))
    (secret,) = packed.secrets
    assert secret["type"] == names.OBJECT_DATA_SECRET_TYPE == "olm.operatorframework.io/object-data"
    assert secret["immutable"] is True
    assert secret["metadata"]["namespace"] == "olm"
    assert secret["metadata"]["labels"][names.REVISION_NAME_LABEL] == "ext-3"
    assert secret["metadata"]["labels"][names.OWNER_NAME_LABEL] == "ext"
    assert secret["metadata"]["name"].startswith("ext-3-")
    assert len(secret["metadata"]["name"]) == len("ext-3-") + 16
    assert "ownerReferences" not in secret["metadata"]


def test_keys_are_content_addressed() -> None:
    obj = _cm("a")
    packed = applier.pack("ext-1", "ext", [obj])
    data = orjson.dumps(obj, option=orjson.OPT_SORT_KEYS)
    expected = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    key = packed.phases[0].refs[0].key
    assert key == expected
    assert len(key) == 43


def test_identical_objects_share_one_key() -> None:
    packed = applier.pack("ext-1", "ext", [_cm("a"), _cm("a")])
    keys = [ref.key for ref in packed.phases[0].refs]
    assert keys[0] == keys[1]
    assert len(packed.secrets[0]["data"]) == 1


def test_deterministic_names_for_the_same_input() -> None:
    objects = [_cm(f"c{i}", 200_000) for i in range(12)]
    first = applier.pack("ext-2", "ext", objects)
    second = applier.pack("ext-2", "ext", list(reversed(objects)))
    assert first == second


def test_a_changed_object_changes_its_key_and_secret_name() -> None:
    before = applier.pack("ext-1", "ext", [_cm("a", 10)])
    after = applier.pack("ext-1", "ext", [_cm("a", 11)])
    assert before.phases != after.phases
    assert before.secrets[0]["metadata"]["name"] != after.secrets[0]["metadata"]["name"]


def test_packing_starts_a_new_secret_at_the_limit() -> None:
    objects = [_noise(f"c{i:02d}", 300_000) for i in range(7)]
    packed = applier.pack("ext-1", "ext", objects)
    assert len(packed.secrets) == 3  # three objects of ~300 KB fit under 900 KiB, never four
    for secret in packed.secrets:
        assert _data_bytes(secret) <= applier.MAX_SECRET_DATA_BYTES
    assert _resolve(packed)[0][1] == sorted(objects, key=lambda o: o["metadata"]["name"])


def test_objects_from_different_phases_share_a_secret() -> None:
    objects = [_cm("a"), {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "sa"}}]
    packed = applier.pack("ext-1", "ext", objects)
    assert [p.name for p in packed.phases] == ["identity", "configuration"]
    assert len(packed.secrets) == 1


def test_large_object_is_gzipped_and_small_one_is_not() -> None:
    big, small = _cm("big", 2_000_000), _cm("small")
    packed = applier.pack("ext-1", "ext", [big, small])
    raw = {name: base64.b64decode(value) for s in packed.secrets for name, value in s["data"].items()}
    kinds = sorted(value[:2] == b"\x1f\x8b" for value in raw.values())
    assert kinds == [False, True]
    assert _resolve(packed)[0][1] == [big, small]


def test_gzip_output_is_reproducible() -> None:
    big = _cm("big", 2_000_000)
    options = applier.PackingOptions()
    assert applier.encode_object(big, options) == applier.encode_object(big, options)


def test_object_too_large_after_gzip_is_a_clear_error() -> None:
    with pytest.raises(applier.PackingError) as caught:
        applier.pack("ext-1", "ext", [_noise("huge", 1_500_000)])
    message = str(caught.value)
    assert 'phase "configuration"' in message
    assert "ConfigMap app/huge" in message
    assert "after gzip compression" in message


def test_too_many_objects_in_one_phase_is_a_clear_error() -> None:
    with pytest.raises(applier.PackingError, match='phase "configuration" has 51 objects'):
        applier.pack("ext-1", "ext", [_cm(f"c{i}") for i in range(51)])


def test_phases_fit_the_cluster_object_set_model() -> None:
    packed = applier.pack("ext-1", "ext", [_cm("a"), _cm("b", 2_000_000)])
    spec = ClusterObjectSetSpec.model_validate(
        {
            "revision": 1,
            "lifecycleState": "Active",
            "collisionProtection": "Prevent",
            "phases": [p.spec() for p in packed.phases],
        }
    )
    assert spec.phases is not None
    assert len(spec.phases[0].objects) == 2


def _id(obj: Mapping[str, Any]) -> tuple[str, str, str]:
    return (obj["kind"], obj["metadata"].get("namespace", ""), obj["metadata"]["name"])


def _argocd_objects() -> Sequence[dict[str, Any]]:
    realdata.require()
    rv1 = realdata.load(realdata.BUNDLES / "argocd-operator" / "0.18.0")
    return render.manifests_for(rv1, "argocd", None, certificate_provider=render.CertManagerProvider())


def test_real_argocd_bundle_packs_its_2mb_crd_through_gzip() -> None:
    objects = _argocd_objects()
    sizes = {_id(o): len(orjson.dumps(o, option=orjson.OPT_SORT_KEYS)) for o in objects}
    largest = max(sizes, key=sizes.__getitem__)
    assert sizes[largest] > applier.MAX_SECRET_DATA_BYTES  # 2 MB of YAML, over 1 MB of JSON: too big raw
    packed = applier.pack("argocd-1", "argocd", objects)
    for secret in packed.secrets:
        assert _data_bytes(secret) <= applier.MAX_SECRET_DATA_BYTES
    gzipped = [
        key
        for s in packed.secrets
        for key, value in s["data"].items()
        if base64.b64decode(value)[:2] == b"\x1f\x8b"
    ]
    assert gzipped
    resolved = _resolve(packed)
    assert sorted(_id(o) for _, objs in resolved for o in objs) == sorted(sizes)
    crd = next(o for _, objs in resolved for o in objs if _id(o) == largest)
    assert crd == next(o for o in objects if _id(o) == largest)
    assert resolved[0][0] == "identity"
    assert "crds" in dict(resolved)
    assert applier.pack("argocd-1", "argocd", list(reversed(objects))) == packed
