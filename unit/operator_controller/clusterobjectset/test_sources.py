"""Object sources: inline and Secret refs, gzip with a size cap, immutability, phase digests."""

from __future__ import annotations

import base64
import gzip
from collections.abc import Mapping
from typing import Any

import orjson
import pytest

from olm.operator_controller.clusterobjectset import sources

CM = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "n"}}


def secret(data: dict[str, bytes], *, immutable: bool = True) -> dict[str, Any]:
    return {"immutable": immutable, "data": {k: base64.b64encode(v).decode() for k, v in data.items()}}


def getter(secrets: dict[tuple[str, str], dict[str, Any]]) -> sources.SecretGetter:
    async def get(namespace: str, name: str) -> Mapping[str, Any] | None:
        return secrets.get((namespace, name))

    return get


def spec(*objects: dict[str, Any], protection: str = "Prevent") -> dict[str, Any]:
    return {"collisionProtection": protection, "phases": [{"name": "p", "objects": list(objects)}]}


async def test_inline_plain_and_gzip_refs_resolve_alike() -> None:
    stored = {("sys", "s"): secret({"plain": orjson.dumps(CM), "packed": gzip.compress(orjson.dumps(CM))})}
    phases = await sources.resolve_phases(
        spec({"object": CM}, {"ref": {"name": "s", "key": "plain"}}, {"ref": {"name": "s", "key": "packed"}}),
        getter(stored),
        system_namespace="sys",
        limit=1 << 20,
    )
    assert [o.manifest for o in phases[0].objects] == [CM, CM, CM]
    assert phases[0].digest.startswith("sha256:")


@pytest.mark.parametrize(
    ("stored", "ref", "error", "text"),
    [
        pytest.param(
            {}, {"name": "s", "key": "k"}, sources.SourceMissing, "referenced secret sys/s", id="no-secret"
        ),
        pytest.param(
            {("sys", "s"): secret({})},
            {"name": "s", "key": "k"},
            sources.SourceMissing,
            "key k not found",
            id="no-key",
        ),
        pytest.param(
            {("o", "s"): secret({"k": orjson.dumps(CM)}, immutable=False)},
            {"name": "s", "namespace": "o", "key": "k"},
            sources.MutableSecrets,
            "must have immutable set to true): o/s",
            id="mutable",
        ),
        pytest.param(
            {("sys", "s"): secret({"k": b"[1]"})},
            {"name": "s", "key": "k"},
            sources.SourceInvalid,
            "not a Kubernetes object",
            id="not-object",
        ),
        pytest.param(
            {("sys", "s"): secret({"k": b"{"})},
            {"name": "s", "key": "k"},
            sources.SourceInvalid,
            "not valid JSON",
            id="bad-json",
        ),
    ],
)
async def test_source_errors(
    stored: dict[tuple[str, str], dict[str, Any]], ref: dict[str, Any], error: type[Exception], text: str
) -> None:
    with pytest.raises(error) as caught:
        await sources.resolve_phases(
            spec({"ref": ref}), getter(stored), system_namespace="sys", limit=1 << 20
        )
    assert text in str(caught.value)


def test_gzip_is_capped_when_decompressed() -> None:
    big = orjson.dumps({**CM, "data": {"k": "x" * 5000}})
    packed = gzip.compress(big)
    assert sources.decode_value(packed, limit=len(big), where="w")["kind"] == "ConfigMap"
    with pytest.raises(sources.SourceInvalid, match="exceeds the limit of 1000 bytes"):
        sources.decode_value(packed, limit=1000, where="w")
    with pytest.raises(sources.SourceInvalid, match="invalid gzip"):
        sources.decode_value(b"\x1f\x8bnot gzip", limit=1000, where="w")


async def test_collision_protection_resolves_object_then_phase_then_spec() -> None:
    document = {
        "collisionProtection": "Prevent",
        "phases": [
            {"name": "a", "objects": [{"object": CM}, {"object": CM, "collisionProtection": "None"}]},
            {"name": "b", "collisionProtection": "IfNoController", "objects": [{"object": CM}]},
        ],
    }
    phases = await sources.resolve_phases(document, getter({}), system_namespace="s", limit=100)
    assert [o.collision_protection for p in phases for o in p.objects] == [
        "Prevent",
        "None",
        "IfNoController",
    ]


def test_digests_ignore_key_order_and_detect_changes() -> None:
    a = sources.ResolvedObject({"kind": "ConfigMap", "apiVersion": "v1"}, "Prevent", "inline")
    b = sources.ResolvedObject({"apiVersion": "v1", "kind": "ConfigMap"}, "Prevent", "inline")
    c = sources.ResolvedObject({"apiVersion": "v1", "kind": "Secret"}, "Prevent", "inline")
    assert sources.phase_digest("p", [a]) == sources.phase_digest("p", [b])
    assert sources.phase_digest("p", [a]) != sources.phase_digest("p", [c])
    assert sources.phase_digest("p", [a]) != sources.phase_digest("q", [a])
    phases = [sources.ResolvedPhase("p", (a,), sources.phase_digest("p", [a]))]
    assert sources.changed_phases(phases, [{"name": "p", "digest": phases[0].digest}]) is None
    message = sources.changed_phases(phases, [{"name": "p", "digest": "sha256:00"}])
    assert message is not None
    assert message.startswith(
        'resolved content of 1 phase(s) has changed: phase "p" (expected digest sha256:00'
    )


def versioned(data: dict[str, bytes], *, uid: str, version: str, immutable: bool = True) -> dict[str, Any]:
    return {**secret(data, immutable=immutable), "metadata": {"uid": uid, "resourceVersion": version}}


async def resolve_with(
    stored: dict[tuple[str, str], dict[str, Any]], decoded: sources.Decoded, *objects: dict[str, Any]
) -> list[sources.ResolvedPhase]:
    return await sources.resolve_phases(
        spec(*objects), getter(stored), system_namespace="sys", limit=1 << 20, decoded=decoded
    )


async def test_decoded_values_and_digests_are_reused_without_reading_the_secret_again() -> None:
    decoded = sources.Decoded()
    ref = {"ref": {"name": "s", "key": "k"}}
    stored = {("sys", "s"): versioned({"k": gzip.compress(orjson.dumps(CM))}, uid="u1", version="1")}
    reads: list[tuple[str, str]] = []

    async def counting(namespace: str, name: str) -> Mapping[str, Any] | None:
        reads.append((namespace, name))
        return stored.get((namespace, name))

    async def resolve(memo: sources.Decoded) -> list[sources.ResolvedPhase]:
        return await sources.resolve_phases(
            spec(ref, {"ref": {"name": "s", "key": "k"}, "collisionProtection": "None"}),
            counting,
            system_namespace="sys",
            limit=1 << 20,
            decoded=memo,
        )

    first = await resolve(decoded)
    assert reads == [("sys", "s")]
    again = await resolve(decoded)
    assert reads == [("sys", "s")]  # the memo answers: no second read
    assert again[0].objects[0].manifest is first[0].objects[0].manifest
    assert [o.collision_protection for o in again[0].objects] == ["Prevent", "None"]
    assert again[0].digest == first[0].digest
    assert len(decoded.manifests) == len(decoded.digests) == 1

    # The same name recreated (a new uid) with other content: while the memo lives, the rollout
    # goes on with what it read first; the first read after it (a fresh memo, as after success)
    # decodes the new content, whose digest differs from the one recorded.
    changed = {**CM, "data": {"x": "1"}}
    stored[("sys", "s")] = versioned({"k": orjson.dumps(changed)}, uid="u2", version="7")
    assert (await resolve(decoded))[0].objects[0].manifest == CM
    recreated = await resolve(sources.Decoded())
    assert recreated[0].objects[0].manifest == changed
    assert recreated[0].digest != first[0].digest
    assert sources.changed_phases(recreated, [{"name": "p", "digest": first[0].digest}]) is not None


async def test_a_mutable_secret_and_a_phase_with_inline_objects_are_not_kept() -> None:
    decoded = sources.Decoded()
    stored = {("sys", "m"): versioned({"k": orjson.dumps(CM)}, uid="u", version="1", immutable=False)}
    with pytest.raises(sources.MutableSecrets):
        await resolve_with(stored, decoded, {"ref": {"name": "m", "key": "k"}})
    assert decoded.manifests == {}
    assert decoded.digests == {}

    stored = {("sys", "s"): versioned({"k": orjson.dumps(CM)}, uid="u", version="1")}
    phases = await resolve_with(stored, decoded, {"object": CM}, {"ref": {"name": "s", "key": "k"}})
    assert len(decoded.manifests) == 1
    assert decoded.digests == {}  # the inline object is part of the spec: hashed on every call
    assert phases[0].digest == sources.phase_digest("p", phases[0].objects)
