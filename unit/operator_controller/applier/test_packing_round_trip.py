"""Secret packing round trip over arbitrary object sets: what the ClusterObjectSet controller
resolves from the Secrets is exactly what was packed, whatever the order it came in."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Mapping
from typing import Any

import orjson
from hypothesis import example, given, settings
from hypothesis import strategies as st

from olm.operator_controller import applier
from olm.operator_controller.clusterobjectset import sources

OPTIONS = applier.PackingOptions(max_secret_bytes=2048, gzip_above_bytes=512)
KINDS = [
    ("v1", "Namespace"),
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
    ("rbac.authorization.k8s.io/v1", "ClusterRole"),
    ("v1", "ConfigMap"),
    ("apps/v1", "Deployment"),
    ("example.com/v1", "Widget"),
]
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
objects = st.builds(
    lambda kind, name, namespace, content, filler: {
        "apiVersion": kind[0],
        "kind": kind[1],
        "metadata": {"name": name, **({"namespace": namespace} if namespace else {})},
        "content": content,
        "filler": filler,
    },
    st.sampled_from(KINDS),
    st.sampled_from(["a", "b", "c"]),
    st.sampled_from(["", "ns"]),
    json_values,
    st.sampled_from(["", "x" * 600, "y" * 1900]),  # below and above the gzip threshold
)


def resolve(packed: applier.PackedRevision) -> list[dict[str, Any]]:
    """The objects as the ClusterObjectSet controller reads them from the Secrets."""
    by_name = {s["metadata"]["name"]: s for s in packed.secrets}

    async def get_secret(namespace: str, name: str) -> Mapping[str, Any] | None:
        return by_name.get(name) if namespace == OPTIONS.system_namespace else None

    spec = {"phases": [phase.spec() for phase in packed.phases]}
    phases = asyncio.run(
        sources.resolve_phases(spec, get_secret, system_namespace=OPTIONS.system_namespace, limit=1 << 20)
    )
    return [o.manifest for phase in phases for o in phase.objects]


def canonical(obj: Mapping[str, Any]) -> bytes:
    return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS)


@settings(max_examples=60, deadline=None)
@given(st.lists(objects, max_size=12), st.randoms(use_true_random=False))
@example(
    [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "content": 1, "filler": ""},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "content": 2, "filler": ""},
    ],
    None,
)  # one identity, two contents: the order used to follow the input's
def test_resolving_the_secrets_gives_back_every_object_in_any_order(
    objs: list[dict[str, Any]], rng: Any
) -> None:
    try:
        packed = applier.pack("ext-1", "ext", objs, OPTIONS)
    except applier.PackingError as error:
        refusal = str(error)
    else:
        check_round_trip(objs, packed, rng)
        return
    assert "more than the 2048 bytes" in refusal


def check_round_trip(objs: list[dict[str, Any]], packed: applier.PackedRevision, rng: Any) -> None:
    for secret in packed.secrets:
        assert sum(len(base64.b64decode(v)) for v in secret["data"].values()) <= OPTIONS.max_secret_bytes
        assert secret["immutable"] is True
    assert sorted(map(canonical, resolve(packed))) == sorted(map(canonical, objs))
    shuffled = list(reversed(objs))
    if rng is not None:
        rng.shuffle(shuffled)
    assert applier.pack("ext-1", "ext", shuffled, OPTIONS) == packed
