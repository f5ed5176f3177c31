"""Properties of Secret packing over generated object sets."""

from __future__ import annotations

import base64
import gzip
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from olm.operator_controller import applier

KINDS = [
    ("v1", "ConfigMap"),
    ("v1", "ServiceAccount"),
    ("apps/v1", "Deployment"),
    ("rbac.authorization.k8s.io/v1", "Role"),
    ("example.com/v1", "Widget"),
]
OPTIONS = applier.PackingOptions(max_secret_bytes=4096, gzip_above_bytes=2048)


@st.composite
def objects(draw: st.DrawFn) -> list[dict[str, Any]]:
    out = []
    for index in range(draw(st.integers(1, 12))):
        api_version, kind = draw(st.sampled_from(KINDS))
        filler = draw(st.sampled_from(["a", "ab", "xyz"])) * draw(st.integers(0, 3000))
        out.append(
            {
                "apiVersion": api_version,
                "kind": kind,
                "metadata": {"name": f"o{index}", "namespace": "ns"},
                "data": {"filler": filler},
            }
        )
    return out


@settings(max_examples=100, deadline=None)
@given(objs=objects(), seed=st.randoms(use_true_random=False))
def test_every_object_round_trips_within_bounds_deterministically(
    objs: list[dict[str, Any]], seed: Any
) -> None:
    packed = applier.pack("ext-1", "ext", objs, OPTIONS)
    stored = {
        (s["metadata"]["name"], key): base64.b64decode(value)
        for s in packed.secrets
        for key, value in s["data"].items()
    }
    for secret in packed.secrets:
        assert sum(len(base64.b64decode(v)) for v in secret["data"].values()) <= OPTIONS.max_secret_bytes
    resolved = []
    for phase in packed.phases:
        for ref in phase.refs:
            raw = stored[(ref.name, ref.key)]
            resolved.append(orjson.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw))

    def canonical(obj: dict[str, Any]) -> bytes:
        return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS)

    assert sorted(map(canonical, resolved)) == sorted(map(canonical, objs))
    shuffled = list(objs)
    seed.shuffle(shuffled)
    assert applier.pack("ext-1", "ext", shuffled, OPTIONS) == packed
