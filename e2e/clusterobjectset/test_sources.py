"""Objects referenced in Secrets (plain and gzip JSON) roll out with inline ones; missing Secrets
are retried, mutable or swapped ones block."""

from __future__ import annotations

import base64
import gzip
from typing import Any

import orjson

from e2e.clusterobjectset.conftest import Revisions, config_map, exists, inline
from olm.api.kinds import CLUSTER_OBJECT_SET
from olm_runtime.client import Client, kinds


def secret(name: str, namespace: str, data: dict[str, bytes], *, immutable: bool = True) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": namespace},
        "type": "olm.operatorframework.io/object-data",
        "immutable": immutable,
        "data": {k: base64.b64encode(v).decode() for k, v in data.items()},
    }


def ref(name: str, key: str, namespace: str | None = None) -> dict[str, Any]:
    return {"ref": {"name": name, "key": key, **({"namespace": namespace} if namespace else {})}}


async def test_plain_and_gzip_refs_mixed_with_inline_objects(
    revisions: Revisions, admin_client: Client, namespace: str
) -> None:
    plain = orjson.dumps(config_map("from-plain", namespace))
    packed = gzip.compress(orjson.dumps(config_map("from-gzip", namespace)))
    await admin_client.create(secret("objects", namespace, {"plain": plain, "packed": packed}))
    await revisions.create(
        "refs",
        [
            (
                "all",
                [
                    ref("objects", "plain", namespace),
                    ref("objects", "packed", namespace),
                    *inline(config_map("from-inline", namespace)),
                ],
            )
        ],
    )
    await revisions.wait_for("refs", "Progressing", "True", "Succeeded")
    for name in ("from-plain", "from-gzip", "from-inline"):
        assert await exists(admin_client, kinds.CONFIG_MAP, name, namespace), name


async def test_a_missing_secret_is_retried_until_it_exists(
    revisions: Revisions, admin_client: Client, namespace: str
) -> None:
    await revisions.create("late", [("all", [ref("late", "cm", namespace)])])
    waiting = await revisions.wait_for("late", "Progressing", "True", "Retrying")
    assert f"referenced secret {namespace}/late" in waiting["message"]
    assert (await revisions.condition("late", "Available"))["reason"] == "Reconciling"
    await admin_client.create(secret("late", namespace, {"cm": orjson.dumps(config_map("late", namespace))}))
    await revisions.wait_for("late", "Progressing", "True", "Succeeded")
    assert await exists(admin_client, kinds.CONFIG_MAP, "late", namespace)


async def test_a_mutable_secret_blocks_the_revision(
    revisions: Revisions, admin_client: Client, namespace: str
) -> None:
    data = {"cm": orjson.dumps(config_map("never", namespace))}
    await admin_client.create(secret("mutable", namespace, data, immutable=False))
    await revisions.create("mutable", [("all", [ref("mutable", "cm", namespace)])])
    blocked = await revisions.wait_for("mutable", "Progressing", "False", "Blocked")
    assert (
        f"not immutable (referenced secrets must have immutable set to true): {namespace}/mutable"
        in (blocked["message"])
    )
    assert not await exists(admin_client, kinds.CONFIG_MAP, "never", namespace)


async def test_a_secret_swapped_for_other_content_blocks_naming_the_phase(
    revisions: Revisions, admin_client: Client, namespace: str
) -> None:
    await admin_client.create(secret("swap", namespace, {"cm": orjson.dumps(config_map("swap", namespace))}))
    await revisions.create("swap", [("config", [ref("swap", "cm", namespace)])])
    await revisions.wait_for("swap", "Progressing", "True", "Succeeded")
    await admin_client.delete(kinds.SECRET, "swap", namespace=namespace)
    other = orjson.dumps(config_map("swap", namespace, {"k": "other"}))
    await admin_client.create(secret("swap", namespace, {"cm": other}))
    # The Secret is not labelled for the revision, so touch the revision to reconcile it now.
    await admin_client.patch(
        CLUSTER_OBJECT_SET, revisions.name("swap"), {"metadata": {"annotations": {"poke": "1"}}}
    )
    blocked = await revisions.wait_for("swap", "Progressing", "False", "Blocked")
    assert 'resolved content of 1 phase(s) has changed: phase "config"' in blocked["message"]
